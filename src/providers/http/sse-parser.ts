// Incremental Server-Sent Events parser (WHATWG HTML §9.2.6 "Interpreting an event stream") over the
// byte chunks of an upstream reply: lines split across chunks, CRLF / CR / LF endings (a CRLF split
// between two chunks included), comment lines, multi-line `data`, a UTF-8 character split across
// chunks. Used by every provider that translates a stream; the pass-through path never parses.

export interface SseEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

/** Incremental SSE parser over byte chunks (handles split lines, CRLF, comments, multi-line data). */
export async function* parseSse(body: AsyncIterable<Buffer>): AsyncIterable<SseEvent> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let first = true;
  // A chunk that ended in CR: a LF at the start of the next chunk belongs to the same line ending.
  let pendingCr = false;
  let event: string | undefined;
  let data: string[] = [];
  let id: string | undefined;
  let lastId: string | undefined;

  const takeLine = (line: string): SseEvent | null => {
    if (line === '') {
      if (data.length === 0) {
        event = undefined;
        return null;
      }
      const out: SseEvent = { event, data: data.join('\n'), id: id ?? lastId };
      lastId = out.id;
      event = undefined;
      data = [];
      id = undefined;
      return out;
    }
    if (line.charCodeAt(0) === 58 /* ':' comment */) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* one leading space is not part of the value */) value = value.slice(1);
    switch (field) {
      case 'data':
        data.push(value);
        break;
      case 'event':
        event = value;
        break;
      case 'id':
        if (!value.includes('\0')) id = value;
        break;
      default:
        // `retry` and unknown fields are ignored (nothing reconnects an upstream stream).
        break;
    }
    return null;
  };

  for await (const chunk of body) {
    let text = decoder.decode(chunk, { stream: true });
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    if (pendingCr && text.charCodeAt(0) === 10) text = text.slice(1);
    pendingCr = false;
    buffer += text;
    let start = 0;
    for (;;) {
      let end = -1;
      for (let i = start; i < buffer.length; i += 1) {
        const c = buffer.charCodeAt(i);
        if (c === 10 || c === 13) {
          end = i;
          break;
        }
      }
      if (end < 0) break;
      const line = buffer.slice(start, end);
      if (buffer.charCodeAt(end) === 13) {
        if (end + 1 < buffer.length) {
          start = buffer.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
        } else {
          pendingCr = true;
          start = end + 1;
        }
      } else {
        start = end + 1;
      }
      const out = takeLine(line);
      if (out) yield out;
    }
    buffer = start === 0 ? buffer : buffer.slice(start);
  }
  buffer += decoder.decode();
  // Lenient at end of stream: some upstreams omit the final blank line after the last event.
  if (buffer.length > 0) takeLine(buffer);
  const tail = takeLine('');
  if (tail) yield tail;
}
