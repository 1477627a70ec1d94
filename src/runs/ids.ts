// Identifiers minted by the run engine. Run ids are UUIDs (the API validates them as such); conversation
// and item ids follow OpenAI's prefixed style so a run id is never mistaken for a conversation id.
import { randomUUID } from 'node:crypto';
import { randomHex } from '../security/random-hex';

export function newRunId(): string {
  return randomUUID();
}

export function newConversationId(): string {
  return `conv_${randomHex(24)}`;
}

/** `msg` messages, `fc` function calls, `fco` function call outputs, `sc` svc_call and `mcp` mcp_call items. */
export function newItemId(prefix: 'msg' | 'fc' | 'fco' | 'sc' | 'mcp'): string {
  return `${prefix}_${randomHex(24)}`;
}
