import type { IncomingMessage } from 'node:http';
import { GatewayError } from './errors';

/**
 * Reads a JSON request body up to `limit` bytes, keeping the original bytes for pass-through
 * forwarding. 413 past the limit (checked against Content-Length first, then while reading),
 * 415 for a non-JSON content type, 400 for bytes that do not parse.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<{ raw: Buffer; value: unknown } | null> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw new GatewayError('body_too_large', `Request body is larger than the limit of ${limit} bytes.`);
  }
  const type = req.headers['content-type'];
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw new GatewayError('body_too_large', `Request body is larger than the limit of ${limit} bytes.`);
    }
    chunks.push(chunk);
  }
  if (size === 0) return null;
  if (type !== undefined && !/^application\/([a-z0-9.+-]*\+)?json\b/i.test(type)) {
    throw new GatewayError('unsupported_media_type', `Content-Type must be application/json (got ${type.split(';')[0]}).`);
  }
  const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  try {
    return { raw, value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch (err) {
    throw new GatewayError('invalid_json', `Request body is not valid JSON: ${(err as Error).message}`);
  }
}
