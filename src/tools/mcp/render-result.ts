// A `tools/call` result as the text the model is shown (the `mcp_call` item's `output`, or its `error`
// when the result is an error): text blocks joined by newlines; other blocks described in a line (the
// model is told an image or a file exists, not given its bytes); structured content as JSON when there
// is no content block to carry it. Cut at a byte bound, saying so.
const decodedSize = (base64: string): number => Buffer.byteLength(base64, 'base64');

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function renderResource(resource: unknown): string {
  if (!isRecord(resource)) return '[resource]';
  const uri = str(resource['uri']) ?? '(no uri)';
  const text = str(resource['text']);
  if (text !== undefined) return `[resource ${uri}]\n${text}`;
  const blob = str(resource['blob']);
  return `[resource ${uri}: ${str(resource['mimeType']) ?? 'binary'}, ${blob === undefined ? 0 : decodedSize(blob)} bytes]`;
}

function renderBlock(block: unknown): string {
  if (!isRecord(block)) return '[unreadable content block]';
  const type = str(block['type']);
  switch (type) {
    case 'text':
      return str(block['text']) ?? '';
    case 'image':
    case 'audio': {
      const data = str(block['data']) ?? '';
      return `[${type}: ${str(block['mimeType']) ?? 'unknown type'}, ${decodedSize(data)} bytes]`;
    }
    case 'resource_link': {
      const name = str(block['title']) ?? str(block['name']) ?? '';
      return `[resource link: ${name} <${str(block['uri']) ?? ''}>]`;
    }
    case 'resource':
      return renderResource(block['resource']);
    default:
      return `[${type ?? 'untyped'} content block]`;
  }
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes (never inside a character), saying how much was left out. */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Back up to the start of a character: UTF-8 continuation bytes are 10xxxxxx.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return `${bytes.subarray(0, end).toString('utf8')}\n[… output cut: ${bytes.length - end} more bytes]`;
}

/** The result's text (see the header), at most `maxBytes` bytes of it. */
export function renderToolResult(result: Record<string, unknown>, maxBytes: number): string {
  const content = Array.isArray(result['content']) ? (result['content'] as unknown[]) : [];
  let text = content.map(renderBlock).join('\n');
  if (content.length === 0 && result['structuredContent'] !== undefined) text = JSON.stringify(result['structuredContent']);
  // Servers of the 2024-10-07 protocol answer `{toolResult}` instead of content blocks.
  if (content.length === 0 && result['toolResult'] !== undefined) text = JSON.stringify(result['toolResult']);
  return cutToBytes(text, maxBytes);
}
