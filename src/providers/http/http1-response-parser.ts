// An HTTP/1.1 response parser (RFC 9112) for the upstream client: the status line and header block
// parsed once per response, then the body framed by Content-Length, chunked transfer coding, or the
// connection's end, handed on as views of the bytes read (no copy). Strict where leniency would let
// one response's bytes be read as another's (conflicting lengths, bad chunk sizes, bytes after the
// end on a reused connection), as undici's and Node's parsers are.

/** A reply the upstream sent that cannot be read as HTTP/1.1: the connection is not reused. */
export class ResponseParseError extends Error {
  readonly code = 'UPSTREAM_BAD_RESPONSE';
  constructor(message: string) {
    super(message);
    this.name = 'ResponseParseError';
  }
}

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface ResponseHead {
  status: number;
  headers: ResponseHeaders;
  /** The connection may carry another request after this response (HTTP/1.1, no `connection: close`). */
  keepAlive: boolean;
  /** The server's `keep-alive: timeout=N` hint, in ms (null when absent). */
  keepAliveMs: number | null;
}

export interface ResponseEvents {
  /** The final head (1xx informational heads are skipped). */
  onHead(head: ResponseHead): void;
  /** Body bytes: a view of the bytes read, valid as long as the caller keeps it. */
  onBody(bytes: Buffer): void;
  /** The body is complete. */
  onComplete(): void;
}

/** Largest status line plus header block accepted (Node's and undici's default is 16 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;
/** Largest chunk-size line (size, extensions) and trailer section accepted. */
const MAX_LINE_BYTES = 4 * 1024;
const MAX_TRAILER_BYTES = 16 * 1024;

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

const CR = 13;
const LF = 10;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
const EMPTY = Buffer.alloc(0);

function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  if (byte >= 97 && byte <= 102) return byte - 87;
  if (byte >= 65 && byte <= 70) return byte - 55;
  return -1;
}

export class ResponseParser {
  private state = State.Done;
  /** The head (or a chunk-size line, or trailers) read so far, when it spans several reads. */
  private partial: Buffer = EMPTY;
  private remaining = 0;
  private chunkSize = 0;
  private sizeDigits = 0;
  private inExtension = false;
  private sawCr = false;
  private lineBytes = 0;
  private trailerBytes = 0;
  private trailerLineEmpty = true;
  private noBody = false;
  /** Set when the body's end is the connection's end, or framing made reuse unsafe. */
  private reusable = true;

  constructor(private readonly events: ResponseEvents) {}

  /** Starts reading the response to a new request (`head`: a HEAD request, whose response has no body). */
  expect(noBody = false): void {
    this.state = State.Head;
    this.partial = EMPTY;
    this.noBody = noBody;
    this.reusable = true;
  }

  /** True between expect() and the response's last byte. */
  get active(): boolean {
    return this.state !== State.Done;
  }

  /** True when the response read so far leaves the connection usable for another request. */
  get keepAlive(): boolean {
    return this.reusable;
  }

  /** True when the body runs until the connection closes (its end completes it rather than failing it). */
  get endsWithConnection(): boolean {
    return this.state === State.UntilClose;
  }

  /**
   * Parses `bytes` from offset `at`. Returns the offset it stopped at: `bytes.length` when all was
   * read, less when `pause()` was asked for from a callback (the caller feeds the rest later). Throws
   * ResponseParseError on a malformed response, and on bytes after the response's end.
   */
  execute(bytes: Buffer, at = 0): number {
    const end = bytes.length;
    while (at < end) {
      if (this.paused) return at;
      switch (this.state) {
        case State.Head:
          at = this.readHead(bytes, at);
          break;
        case State.Length: {
          const view = this.take(bytes, at);
          at += view.length;
          const done = this.remaining === 0;
          if (done) this.state = State.Done;
          this.events.onBody(view);
          if (done) this.events.onComplete();
          break;
        }
        case State.ChunkSize:
          at = this.readChunkSize(bytes, at);
          break;
        case State.ChunkData: {
          const view = this.take(bytes, at);
          at += view.length;
          if (this.remaining === 0) {
            this.state = State.ChunkDataEnd;
            this.lineBytes = 0;
          }
          this.events.onBody(view);
          break;
        }
        case State.ChunkDataEnd:
          at = this.readChunkDataEnd(bytes, at);
          break;
        case State.Trailers:
          at = this.readTrailers(bytes, at);
          break;
        case State.UntilClose: {
          const view = at === 0 ? bytes : bytes.subarray(at);
          at = end;
          this.events.onBody(view);
          break;
        }
        case State.Done:
          throw new ResponseParseError('The upstream sent bytes after the end of its response.');
      }
    }
    return at;
  }

  /** Up to `remaining` bytes from `at` (a Content-Length body, a chunk's data), counted off `remaining`. */
  private take(bytes: Buffer, at: number): Buffer {
    const take = Math.min(this.remaining, bytes.length - at);
    this.remaining -= take;
    return at === 0 && take === bytes.length ? bytes : bytes.subarray(at, at + take);
  }

  /** Stops execute() after the current callback (backpressure); it returns where it stopped. */
  paused = false;

  /** The connection ended: completes a body that runs until the close; false when the response was cut. */
  finish(): boolean {
    if (this.state === State.UntilClose) {
      this.complete();
      return true;
    }
    return this.state === State.Done;
  }

  private readHead(bytes: Buffer, at: number): number {
    // The blank line ending the head, searched from where the last read stopped (less 3 bytes: a CRLFCRLF
    // may straddle two reads).
    let block: Buffer;
    let from: number;
    if (this.partial.length === 0) {
      block = at === 0 ? bytes : bytes.subarray(at);
      from = 0;
    } else {
      from = Math.max(0, this.partial.length - 3);
      block = Buffer.concat([this.partial, bytes.subarray(at)]);
    }
    const blank = block.indexOf('\r\n\r\n', from, 'latin1');
    // The head's size: up to its blank line, or all that was read while that has not come.
    const headBytes = blank < 0 ? block.length : blank;
    if (headBytes > MAX_HEAD_BYTES) throw new ResponseParseError(`The upstream's response head is larger than ${MAX_HEAD_BYTES} bytes.`);
    if (blank < 0) {
      this.partial = Buffer.from(block);
      return bytes.length;
    }
    const consumed = blank + 4 - this.partial.length;
    const text = block.toString('latin1', 0, blank);
    this.partial = EMPTY;
    this.startBody(text);
    return at + consumed;
  }

  private startBody(text: string): void {
    const lines = text.split('\r\n');
    const status = STATUS_LINE.exec(lines[0]!);
    if (!status) throw new ResponseParseError(`The upstream's status line is not HTTP/1.x: ${JSON.stringify(lines[0]!.slice(0, 80))}.`);
    const code = Number(status[2]);
    const headers: ResponseHeaders = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon) : '';
      // A folded line (leading whitespace) or a name with spaces is how a header gets smuggled.
      if (!TOKEN.test(name)) throw new ResponseParseError(`The upstream sent a malformed header line: ${JSON.stringify(line.slice(0, 80))}.`);
      const value = line.slice(colon + 1).trim();
      const key = name.toLowerCase();
      const existing = headers[key];
      if (existing === undefined) headers[key] = value;
      else if (Array.isArray(existing)) existing.push(value);
      else headers[key] = [existing, value];
    }
    if (code < 200) {
      // 101 would switch protocols: nothing here asks for that.
      if (code === 101) throw new ResponseParseError('The upstream switched protocols (101), which no request asked for.');
      this.state = State.Head; // informational: the final head follows
      return;
    }
    const http10 = status[1] === '0';
    const connection = headerList(headers['connection']);
    const keepAlive = http10 ? connection.includes('keep-alive') : !connection.includes('close');
    this.reusable = keepAlive;
    // The framing is checked before the head is announced: a response whose length cannot be known
    // fails as a whole, not as a head followed by a broken body.
    const hasBody = this.frameBody(code, headers);
    this.events.onHead({ status: code, headers, keepAlive, keepAliveMs: keepAliveHint(headers['keep-alive']) });
    if (!hasBody) this.complete();
  }

  /** Sets the state that reads the body; false when there is none. */
  private frameBody(code: number, headers: ResponseHeaders): boolean {
    if (this.noBody || code === 204 || code === 304) return false;
    const coding = headers['transfer-encoding'];
    if (coding !== undefined) {
      const codings = headerList(coding);
      if (codings[codings.length - 1] === 'chunked') {
        // RFC 9112 §6.3: with both, Transfer-Encoding wins, and the connection must not be reused.
        if (headers['content-length'] !== undefined) this.reusable = false;
        this.state = State.ChunkSize;
        this.startChunkSize();
        return true;
      }
      this.reusable = false;
      this.state = State.UntilClose;
      return true;
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      const values = headerList(length);
      const first = values[0]!;
      if (!/^\d{1,15}$/.test(first) || values.some((value) => value !== first)) {
        throw new ResponseParseError(`The upstream sent an invalid Content-Length: ${JSON.stringify(String(length).slice(0, 40))}.`);
      }
      this.remaining = Number(first);
      if (this.remaining === 0) return false;
      this.state = State.Length;
      return true;
    }
    this.reusable = false;
    this.state = State.UntilClose;
    return true;
  }

  private complete(): void {
    this.state = State.Done;
    this.events.onComplete();
  }

  private startChunkSize(): void {
    this.chunkSize = 0;
    this.sizeDigits = 0;
    this.inExtension = false;
    this.sawCr = false;
    this.lineBytes = 0;
  }

  /** `size [; ext] CRLF`, byte by byte (a few bytes per chunk), across reads. */
  private readChunkSize(bytes: Buffer, at: number): number {
    const end = bytes.length;
    while (at < end) {
      const byte = bytes[at++]!;
      if (++this.lineBytes > MAX_LINE_BYTES) throw new ResponseParseError('The upstream sent an overlong chunk-size line.');
      if (byte === LF) {
        if (this.sizeDigits === 0) throw new ResponseParseError('The upstream sent a chunk without a size.');
        if (this.chunkSize === 0) {
          this.state = State.Trailers;
          this.trailerBytes = 0;
          this.trailerLineEmpty = true;
        } else {
          this.state = State.ChunkData;
          this.remaining = this.chunkSize;
        }
        return at;
      }
      if (this.sawCr) throw new ResponseParseError('The upstream sent a bare CR in a chunk-size line.');
      if (byte === CR) {
        this.sawCr = true;
        continue;
      }
      if (this.inExtension) continue;
      const digit = hexValue(byte);
      if (digit >= 0) {
        // 13 hex digits keep the size an exact integer; no real chunk comes near it.
        if (++this.sizeDigits > 13) throw new ResponseParseError('The upstream sent a chunk size too large to be real.');
        this.chunkSize = this.chunkSize * 16 + digit;
      } else if (byte === 0x3b /* ; */ || byte === 0x20 || byte === 0x09) {
        this.inExtension = true; // extensions (and whitespace before them) are ignored
      } else {
        throw new ResponseParseError('The upstream sent an invalid chunk size.');
      }
    }
    return at;
  }

  /** The CRLF after a chunk's data. */
  private readChunkDataEnd(bytes: Buffer, at: number): number {
    const end = bytes.length;
    while (at < end) {
      const byte = bytes[at++]!;
      if (byte === LF) {
        this.state = State.ChunkSize;
        this.startChunkSize();
        return at;
      }
      if (byte !== CR || ++this.lineBytes > 1) throw new ResponseParseError('The upstream sent chunk data longer than its size.');
    }
    return at;
  }

  /** Trailer fields after the last chunk (ignored), up to the blank line. */
  private readTrailers(bytes: Buffer, at: number): number {
    const end = bytes.length;
    while (at < end) {
      const byte = bytes[at++]!;
      if (++this.trailerBytes > MAX_TRAILER_BYTES) throw new ResponseParseError('The upstream sent an overlong trailer section.');
      if (byte === LF) {
        if (this.trailerLineEmpty) {
          this.complete();
          return at;
        }
        this.trailerLineEmpty = true;
      } else if (byte !== CR) {
        this.trailerLineEmpty = false;
      }
    }
    return at;
  }
}

/** A header's comma-separated list, lowercased and trimmed (Connection, Transfer-Encoding, Content-Length). */
function headerList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const joined = Array.isArray(value) ? value.join(',') : value;
  return joined
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part.length > 0);
}

/** `keep-alive: timeout=5, max=100` → 5000. */
function keepAliveHint(value: string | string[] | undefined): number | null {
  if (value === undefined) return null;
  const match = /(?:^|[,\s])timeout=(\d+)/i.exec(Array.isArray(value) ? value.join(',') : value);
  return match ? Number(match[1]) * 1000 : null;
}
