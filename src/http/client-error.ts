// Requests Node's HTTP parser refuses (a request line or headers past the size limit, a NUL or other
// byte the grammar forbids, broken framing) never reach Express: Node answers them itself with a bare
// status line and no body. This answers them in the JSON envelope of the path family instead, read
// from the start of the refused request when the parser kept it.
import type { Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'winston';
import { errorEnvelope } from './envelope';
import { GatewayError, STATUS_LABELS } from './errors';
import { familyOfPath } from './path-family';

interface ParserError extends Error {
  code?: string;
  /** The bytes the parser was working on (Node sets it on parse errors). */
  rawPacket?: Buffer;
}

/** The error of each parser failure, as Node's own default answer chooses its status. */
function errorOf(code: string | undefined): GatewayError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('headers_too_large', 'Request line and headers are larger than the server accepts; send a shorter URL or fewer headers.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError('body_too_large', 'Chunk extensions are larger than the server accepts.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('request_timeout', 'The request was not received in time.');
    default:
      return new GatewayError('bad_request', 'Malformed HTTP request: it does not follow the HTTP/1.1 message syntax (RFC 9112).');
  }
}

/** The path of the request line at the start of `raw`, when it got that far ("" otherwise). */
function pathOf(raw: Buffer | undefined): string {
  if (!raw) return '';
  // Only the first bytes matter: the method and the start of the target.
  const head = raw.subarray(0, 256).toString('latin1');
  const match = /^[A-Z]{1,16} (\/[^ ?\r\n]*)/.exec(head);
  return match?.[1] ?? '';
}

/** The raw response: a status line, JSON headers, `Connection: close` (the parser state is lost). */
export function clientErrorResponse(err: ParserError): string {
  const error = errorOf(err.code);
  const body = JSON.stringify(errorEnvelope(error, familyOfPath(pathOf(err.rawPacket))));
  return (
    `HTTP/1.1 ${error.status} ${STATUS_LABELS[error.status] ?? 'Error'}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

/** Installs the JSON answer to parser errors on `server` (replaces Node's bodiless default). */
export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (err: ParserError, socket: Duplex) => {
    // A response already under way on this socket (a timeout mid-reply), or a socket the peer closed:
    // nothing can be written in HTTP terms any more.
    const inProgress = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent === true) {
      socket.destroy();
      return;
    }
    logger.info('malformed request refused', { code: err.code ?? 'unknown' });
    socket.end(clientErrorResponse(err));
  });
}
