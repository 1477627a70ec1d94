// A reasoning item's `encrypted_content` is the one place the Responses wire lets a client hand
// opaque reasoning state back. OpenAI's own encrypted reasoning goes there verbatim. Another
// provider's (Anthropic's thinking signature, its redacted_thinking payload) is wrapped in an envelope
// of ours, so a client that echoes reasoning items with its next request (the Vercel AI SDK and the
// OpenAI Agents SDK do, for stateless tool loops) gives that provider back what it needs to continue
// after a tool call. The envelope is a prefix and base64url JSON, readable only by this format.
import type { ReasoningPart } from '../../canonical/model';
import { unreadable } from './request-errors';

const PREFIX = 'agw-reasoning-v1:';

type ReasoningState = Pick<ReasoningPart, 'signature' | 'redactedData' | 'encryptedContent'>;

/** The `encrypted_content` for a reasoning part, or undefined when it carries no opaque state. */
export function encodeReasoningState(state: ReasoningState): string | undefined {
  if (state.signature === undefined && state.redactedData === undefined) return state.encryptedContent;
  const envelope: Record<string, string> = {};
  if (state.signature !== undefined) envelope['signature'] = state.signature;
  if (state.redactedData !== undefined) envelope['redactedData'] = state.redactedData;
  if (state.encryptedContent !== undefined) envelope['encryptedContent'] = state.encryptedContent;
  return PREFIX + Buffer.from(JSON.stringify(envelope), 'utf8').toString('base64url');
}

/** The opaque state an `encrypted_content` carries (an envelope of ours unwrapped; anything else is OpenAI's). */
export function decodeReasoningState(encrypted: string, param: string): ReasoningState {
  if (!encrypted.startsWith(PREFIX)) return { encryptedContent: encrypted };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw unreadable(param, 'is not reasoning state this gateway wrote; send reasoning items back unchanged.');
  }
  const state: ReasoningState = {};
  const fields = parsed as Record<string, unknown>;
  for (const key of ['signature', 'redactedData', 'encryptedContent'] as const) {
    const value = fields[key];
    if (typeof value === 'string') state[key] = value;
  }
  return state;
}
