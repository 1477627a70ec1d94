// Identifiers minted by the run engine. Run ids are UUIDs (the API validates them as such); conversation
// and item ids follow OpenAI's prefixed style so a run id is never mistaken for a conversation id.
import { randomBytes, randomUUID } from 'node:crypto';

export function newRunId(): string {
  return randomUUID();
}

export function newConversationId(): string {
  return `conv_${randomBytes(24).toString('hex')}`;
}

/** `msg` for messages, `fc` for function calls, `fco` for function call outputs. */
export function newItemId(prefix: 'msg' | 'fc' | 'fco' | 'sc'): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}
