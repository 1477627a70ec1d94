import type { IncomingMessage } from 'node:http';
import { GatewayError } from './errors';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';

/**
 * Reads a JSON request body up to `limit` bytes, keeping the original bytes for pass-through
 * forwarding. 413 past the limit (checked against Content-Length first, then while reading),
 * 415 for a non-JSON content type, 400 for bytes that do not parse or that nest deeper than
 * MAX_JSON_DEPTH (parsed, such a value would overflow the stack of whatever walks it: a 500).
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<{ raw: Buffer; value: unknown } | null> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw new GatewayError('body_too_large', `Request body is larger than the limit of ${limit} bytes.`);
  }
  const type = req.headers['content-type'];
  const raw = await collect(req, limit);
  if (raw.length === 0) return null;
  if (type !== undefined && !JSON_TYPE.test(type)) {
    throw new GatewayError('unsupported_media_type', `Content-Type must be application/json (got ${type.split(';')[0]}).`);
  }
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8')) as unknown;
  } catch (err) {
    throw new GatewayError('invalid_json', `Request body is not valid JSON: ${(err as Error).message}`);
  }
  if (nestsDeeperThan(raw)) {
    throw new GatewayError('validation_failed', `Invalid request: the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  return { raw, value };
}

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\b/i;
const EMPTY = Buffer.alloc(0);

/**
 * The request's bytes, from 'data' events (one promise per body rather than the stream's async
 * iterator); past `limit` the rest is drained unread and the promise rejects with 413.
 */
function collect(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let first: Buffer | null = null;
    let chunks: Buffer[] | null = null;
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(new GatewayError('body_too_large', `Request body is larger than the limit of ${limit} bytes.`));
        return;
      }
      if (first === null) first = chunk;
      else (chunks ??= [first]).push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks ? Buffer.concat(chunks, size) : (first ?? EMPTY));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const onClose = (): void => {
      // The client went away before the body ended.
      cleanup();
      if (!req.complete) reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
