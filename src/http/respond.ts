import type { ServerResponse } from 'node:http';
import { errorEnvelope } from './envelope';
import type { EnvelopeFamily, GatewayError } from './errors';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

/** Writes an error in the family's envelope; when a stream already started, just ends the response. */
export function sendError(res: ServerResponse, err: GatewayError, family: EnvelopeFamily): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  sendJson(res, err.status, errorEnvelope(err, family), err.headers);
}
