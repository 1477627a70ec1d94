// Reads a POST /v1/files body: multipart/form-data (RFC 7578) with one `file` part and text fields,
// as the OpenAI SDKs' `files.create` send it, parsed by busboy. The file is held in memory up to
// files.maxBytes: a larger one is a 413 (declared by Content-Length: refused before reading; found
// while reading: the rest is drained and discarded, then refused). Fields are few and short.
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { GatewayError } from '../http/errors';

export interface FileUpload {
  filename: string;
  /** The part's Content-Type (busboy says text/plain when the part names none). */
  mediaType: string;
  content: Buffer;
  /** The text fields, by name. */
  fields: Record<string, string>;
}

/** Room for the multipart framing and the text fields around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
const MAX_FIELDS = 8;
const MAX_FIELD_BYTES = 1024;

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError('body_too_large', `The file is larger than the limit of ${maxBytes} bytes (files.maxBytes).`, { param: 'file' });
}

/**
 * The upload's file and fields. `fileField`: the one part that may (and must) carry a file;
 * `allowedFields`: the text fields accepted (any other is a 400 naming it).
 */
export async function readFileUpload(
  req: IncomingMessage,
  options: { maxBytes: number; fileField: string; allowedFields: readonly string[] },
): Promise<FileUpload> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(type)) {
    req.resume();
    throw new GatewayError('unsupported_media_type', `Content-Type must be multipart/form-data (got ${type.split(';')[0] || 'none'}).`);
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxBytes + FORM_OVERHEAD_BYTES) {
    req.resume();
    throw tooLarge(options.maxBytes);
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // File names are UTF-8 as browsers and undici's FormData send them (busboy's default is latin1).
      defParamCharset: 'utf8',
      limits: { files: 1, fileSize: options.maxBytes, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, parts: MAX_FIELDS + 1, fieldNameSize: 100 },
    });
  } catch (err) {
    req.resume();
    throw new GatewayError('bad_request', `The multipart body cannot be read: ${(err as Error).message}.`);
  }

  return new Promise<FileUpload>((resolve, reject) => {
    // The first problem wins; the body is still read to its end (then the answer is sent).
    let problem: GatewayError | null = null;
    const fail = (err: GatewayError): void => {
      problem ??= err;
    };
    let file: { filename: string; mediaType: string; chunks: Buffer[]; size: number } | null = null;
    const fields: Record<string, string> = {};

    parser.on('file', (name, stream, info) => {
      if (name !== options.fileField) {
        fail(
          new GatewayError('validation_failed', `Invalid request: '${name}' is not a file field; send the file as '${options.fileField}'.`, { param: name }),
        );
        stream.resume();
        return;
      }
      const current = { filename: info.filename ?? '', mediaType: info.mimeType, chunks: [] as Buffer[], size: 0 };
      file = current;
      stream.on('data', (chunk: Buffer) => {
        if (problem) return;
        current.chunks.push(chunk);
        current.size += chunk.length;
      });
      stream.on('limit', () => {
        current.chunks = [];
        fail(tooLarge(options.maxBytes));
      });
    });
    parser.on('field', (name, value, info) => {
      if (!options.allowedFields.includes(name)) {
        fail(
          new GatewayError(
            'validation_failed',
            `Invalid request: unknown field '${name}'; expected ${[options.fileField, ...options.allowedFields].join(', ')}.`,
            { param: name },
          ),
        );
      } else if (info.valueTruncated) {
        fail(new GatewayError('validation_failed', `Invalid request: '${name}' is longer than ${MAX_FIELD_BYTES} bytes.`, { param: name }));
      } else fields[name] = value;
    });
    const tooMany = (): void => fail(new GatewayError('validation_failed', `Invalid request: at most one file and ${MAX_FIELDS} fields.`));
    parser.on('filesLimit', tooMany);
    parser.on('fieldsLimit', tooMany);
    parser.on('partsLimit', tooMany);
    parser.once('error', (err: Error) => {
      req.unpipe(parser);
      req.resume();
      reject(problem ?? new GatewayError('bad_request', `The multipart body cannot be read: ${err.message}.`));
    });
    parser.once('close', () => {
      if (problem) return reject(problem);
      const got = file as typeof file;
      if (!got)
        return reject(
          new GatewayError('validation_failed', `Invalid request: the '${options.fileField}' part (a file) is required.`, { param: options.fileField }),
        );
      resolve({ filename: got.filename, mediaType: got.mediaType, content: Buffer.concat(got.chunks, got.size), fields });
    });
    req.once('close', () => {
      // The client went away before the body ended.
      if (!req.complete) reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    });
    req.pipe(parser);
  });
}
