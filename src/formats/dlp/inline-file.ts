// Files in a request under a DLP policy (spec, Responses rule 8, applied to every format): inline
// text (text/*, JSON, CSV, XML, YAML, source code) is decoded, redacted and re-encoded; what cannot be
// inspected (binary data, a file_id or file_url reference the upstream would fetch) is a 400, since
// forwarding it would send text nobody inspected.
import { GatewayError } from '../../http/errors';
import type { Redactor } from '../../pipeline/context';
import { redactField, redactFilename } from './redact-values';

const TEXT_TYPES =
  /^(?:text\/[\w.+-]+|application\/(?:json|[\w.+-]+\+json|x-ndjson|xml|[\w.+-]+\+xml|yaml|x-yaml|toml|javascript|ecmascript|typescript|x-sh|x-python|sql|graphql|x-httpd-php|csv))$/i;

/** Source code and text by file extension, for data without a media type. */
const TEXT_EXTENSIONS = new Set(
  'txt md markdown csv tsv json jsonl ndjson xml yaml yml toml ini cfg conf log html htm css scss js mjs cjs jsx ts tsx py rb go rs java kt kts scala c h cc cpp hpp cs swift php pl sh bash zsh sql graphql proto r m lua dart ex exs erl hs clj vue svelte'.split(
    ' ',
  ),
);

/** The media type a file part declares, from its data URL or its filename's extension. */
function isTextFile(mediaType: string | null, filename: unknown): boolean {
  const type = mediaType?.split(';')[0]!.trim() ?? '';
  if (type !== '') return TEXT_TYPES.test(type);
  if (typeof filename !== 'string') return false;
  const dot = filename.lastIndexOf('.');
  return dot >= 0 && TEXT_EXTENSIONS.has(filename.slice(dot + 1).toLowerCase());
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function uninspectable(param: string, why: string): GatewayError {
  return new GatewayError('uninspectable_file', `${why}: the organization's DLP policy forwards only content it can inspect (inline text files).`, {
    param,
  });
}

/** The charset parameter of a media type (`text/plain; charset=utf-16le`). */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;
const UTF8_CHARSETS: ReadonlySet<string> = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);

/**
 * Redacts base64 text data in place; `mediaType` (with its parameters) null when only the filename
 * says what it is. Throws uninspectable_file for what is not UTF-8 text: binary data by type, a
 * declared charset other than UTF-8, bytes that do not decode, or NUL bytes (UTF-16 text of ASCII
 * characters decodes as UTF-8 with a NUL after each one, and no detector sees a secret spelt so).
 * What goes is what was decoded and inspected, re-encoded: a decoder skips what follows a padding
 * `=` and characters outside the alphabet, and those bytes must not travel as the caller wrote them.
 */
export function redactBase64Text(base64: string, mediaType: string | null, filename: unknown, redactor: Redactor, param: string): string {
  if (!isTextFile(mediaType, filename)) throw uninspectable(param, `A ${mediaType?.split(';')[0] || 'binary'} file cannot be inspected`);
  const charset = mediaType === null ? undefined : CHARSET.exec(mediaType)?.[1]?.toLowerCase();
  if (charset !== undefined && !UTF8_CHARSETS.has(charset)) throw uninspectable(param, `A file in the ${charset} charset cannot be inspected`);
  const bytes = Buffer.from(base64, 'base64');
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw uninspectable(param, 'A file whose bytes are not UTF-8 text cannot be inspected');
  }
  if (text.includes('\0')) throw uninspectable(param, 'A file holding NUL bytes (UTF-16 text or binary data) cannot be inspected');
  const redacted = redactor.redact(text);
  if (redacted.count > 0) return Buffer.from(redacted.text, 'utf8').toString('base64');
  const decoded = bytes.toString('base64');
  return decoded === base64 ? base64 : decoded;
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*?);base64,/i;

/**
 * An OpenAI file part's content (`{file_data, file_id, file_url, filename}`: the chat `file` part's
 * `file` object, or a Responses-style `input_file` part), inspected in place.
 */
export function redactFileObject(file: Record<string, unknown>, redactor: Redactor, param: string): void {
  if (file['file_id'] !== undefined) throw uninspectable(`${param}.file_id`, 'A file referenced by file_id cannot be inspected');
  if (file['file_url'] !== undefined) throw uninspectable(`${param}.file_url`, 'A file referenced by file_url cannot be inspected');
  redactData(file, redactor, param);
  // The name is text the model reads too: redacted once the type it names has been read.
  if (typeof file['filename'] === 'string') redactFilename(file, 'filename', redactor);
  else redactField(file, 'filename', redactor);
}

function redactData(file: Record<string, unknown>, redactor: Redactor, param: string): void {
  const data = file['file_data'];
  if (data === undefined) return;
  if (typeof data !== 'string') throw uninspectable(`${param}.file_data`, 'file_data that is not a string cannot be inspected');
  const dataUrl = DATA_URL.exec(data);
  if (dataUrl) {
    const prefix = dataUrl[0];
    const mediaType = `${dataUrl[1] ?? ''}${dataUrl[2] ?? ''}`;
    file['file_data'] = prefix + redactBase64Text(data.slice(prefix.length), mediaType, file['filename'], redactor, `${param}.file_data`);
  } else {
    file['file_data'] = redactBase64Text(data, null, file['filename'], redactor, `${param}.file_data`);
  }
}
