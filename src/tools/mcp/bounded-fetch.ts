// A fetch for the MCP transports whose response bodies cannot grow without bound: the SDK reads a JSON
// reply whole and buffers an SSE event until its blank line, so a hostile server could otherwise fill
// the gateway's memory. A JSON (or any non-SSE) body may carry at most `maxBytes`; an event stream, which
// lives as long as the session, may carry at most `maxBytes` between two event boundaries (a blank
// line, WHATWG HTML "Server-sent events": CRLF, LF or CR line ends).
export class McpResponseTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The MCP server sent a message larger than ${maxBytes} bytes.`);
    this.name = 'McpResponseTooLargeError';
  }
}

const LF = 0x0a;
const CR = 0x0d;

function limitStream(maxBytes: number, eventStream: boolean, onOverflow: (error: McpResponseTooLargeError) => void): TransformStream<Uint8Array, Uint8Array> {
  let counted = 0;
  let atLineStart = true;
  let previous = -1;
  const overflow = (controller: TransformStreamDefaultController<Uint8Array>): void => {
    const error = new McpResponseTooLargeError(maxBytes);
    onOverflow(error);
    controller.error(error);
  };
  return new TransformStream({
    transform(chunk, controller) {
      if (!eventStream) {
        counted += chunk.byteLength;
        if (counted > maxBytes) return overflow(controller);
      } else {
        for (const byte of chunk) {
          if (byte === LF && previous === CR) {
            previous = byte; // the LF of a CRLF: one line end, already counted at its CR
            continue;
          }
          previous = byte;
          if (byte === LF || byte === CR) {
            if (atLineStart) counted = 0; // an empty line: the event ended
            atLineStart = true;
          } else {
            atLineStart = false;
            counted += 1;
            // Checked byte by byte: a whole oversized event may arrive in one chunk, its end resetting the count.
            if (counted > maxBytes) return overflow(controller);
          }
        }
      }
      controller.enqueue(chunk);
    },
  });
}

export function boundedFetch(base: typeof fetch, maxBytes: number, onOverflow: (error: McpResponseTooLargeError) => void): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body) return response;
    const eventStream = (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (!eventStream && declared > maxBytes) {
      await response.body.cancel();
      const error = new McpResponseTooLargeError(maxBytes);
      onOverflow(error);
      throw error;
    }
    const bounded = new Response(response.body.pipeThrough(limitStream(maxBytes, eventStream, onOverflow)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // The SDK reads `url` to describe an unfollowed redirect; a constructed Response has none of its own.
    Object.defineProperty(bounded, 'url', { value: response.url });
    return bounded;
  };
}
