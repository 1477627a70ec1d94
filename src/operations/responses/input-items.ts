// The originating user input of a response, as GET /v1/responses/{id}/input_items lists it (spec
// "Stored response and input-items list": items with id, type, role, content parts, status). Taken from
// the body as it was forwarded, so under a DLP policy what is stored is the redacted text.
import { mintId } from '../../formats/responses';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

function contentParts(content: unknown): unknown[] {
  if (typeof content === 'string') return [{ type: 'input_text', text: content }];
  return Array.isArray(content) ? content : [];
}

/** The user messages of `input` (a string is one), each with an id (kept, or minted) and a status. */
export function originatingInputItems(input: unknown): Json[] {
  if (typeof input === 'string') {
    return [{ id: mintId('msg'), type: 'message', role: 'user', content: contentParts(input), status: 'completed' }];
  }
  if (!Array.isArray(input)) return [];
  const items: Json[] = [];
  for (const entry of input) {
    if (!isRecord(entry)) continue;
    const type = entry['type'] ?? 'message';
    if (type !== 'message' || entry['role'] !== 'user') continue;
    items.push({
      id: typeof entry['id'] === 'string' ? entry['id'] : mintId('msg'),
      type: 'message',
      role: 'user',
      content: contentParts(entry['content']),
      status: typeof entry['status'] === 'string' ? entry['status'] : 'completed',
    });
  }
  return items;
}
