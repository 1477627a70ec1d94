// Builders and readers of the canonical model for the converter and provider tests.
import type { Message, ModelRequest, StreamPart } from '../../src/canonical/model';

/** A user turn of one text part. */
export const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

/** A request of the given fields; one user turn "hi", no tools and no options unless given. */
export function modelRequest(fields: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'model', messages: [user('hi')], tools: [], options: {}, ...fields };
}

/** The text a part stream carries (what a client renders). */
export const streamedText = (parts: readonly StreamPart[]): string => parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
