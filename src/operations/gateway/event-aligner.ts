// Relays an upstream's SSE bytes in whole events: each chunk is written up to its last event boundary
// (a blank line) and the incomplete tail is held until the rest arrives. The client never holds half
// an event, so a heartbeat comment or a final error event can always be written safely, and a stream
// cut mid-event never hands the client a truncated JSON payload. No copying on the common path (OpenAI
// upstreams send whole events per chunk): subarray views, one concat only when an event was split.

const MAX_HELD = 1024 * 1024;

function lastBoundary(bytes: Buffer): number {
  const lf = bytes.lastIndexOf('\n\n');
  const crlf = bytes.lastIndexOf('\n\r\n');
  if (lf < 0 && crlf < 0) return -1;
  return lf >= crlf ? lf + 2 : crlf + 3;
}

export class EventAligner {
  private held: Buffer | null = null;

  /** The bytes ready to relay now (possibly empty). */
  push(chunk: Buffer): Buffer {
    // Common path: nothing held and the chunk ends on a boundary. Two byte reads instead of two
    // backward scans (the CRLF search walks the whole chunk when, as usual, there is no CRLF).
    const n = chunk.length;
    if (this.held === null && n >= 2 && chunk[n - 1] === 0x0a && (chunk[n - 2] === 0x0a || (chunk[n - 2] === 0x0d && chunk[n - 3] === 0x0a))) return chunk;
    const bytes = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    const end = lastBoundary(bytes);
    if (end === bytes.length) {
      this.held = null;
      return bytes;
    }
    if (end < 0) {
      // A runaway event with no boundary (or CR-only line endings): relay rather than hoard.
      if (bytes.length > MAX_HELD) {
        this.held = null;
        return bytes;
      }
      this.held = bytes;
      return Buffer.alloc(0);
    }
    this.held = bytes.subarray(end);
    return bytes.subarray(0, end);
  }

  /** What is still held when the upstream ended (an event without its final blank line). */
  rest(): Buffer | null {
    const rest = this.held;
    this.held = null;
    return rest;
  }
}
