// Builders and readers of the canonical model for the converter and provider tests.
import type { Message, ModelRequest, StreamPart } from '../../src/canonical/model';
import type { PartRenderer } from '../../src/formats/shared/part-renderer';

/** A user turn of one text part. */
export const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });

/** A request of the given fields; one user turn "hi", no tools and no options unless given. */
export function modelRequest(fields: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'model', messages: [user('hi')], tools: [], options: {}, ...fields };
}

/** The text a part stream carries (what a client renders). */
export const streamedText = (parts: readonly StreamPart[]): string => parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');

/** Everything a format's renderer produces for `parts`, its end included. */
export function renderAll<Out>(renderer: PartRenderer<Out>, parts: Iterable<StreamPart>): Out[] {
  const out: Out[] = [];
  for (const part of parts) out.push(...renderer.push(part));
  out.push(...renderer.end());
  return out;
}
