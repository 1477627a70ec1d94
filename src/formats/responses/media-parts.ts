// `input_image` and `input_file` parts → canonical image and file parts. Where the bytes are decides
// the source: a data: URL is inline base64 (its media type kept), an http(s) URL is fetched by the
// provider, a `file_id` names a file stored at the upstream. A shape the converter cannot read is a
// 400 naming the field.
import type { FilePart, ImagePart, MediaSource } from '../../canonical/model';
import { isRecord, optionalString, unreadable } from './request-errors';

/** `data:<media type>[;params][;base64],<data>` (RFC 2397). */
const DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*),/i;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const HTTP_URL = /^https?:\/\//i;

/** Media types by file extension, for `file_data` sent as bare base64 with only a filename. */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
  xml: 'application/xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

function mediaTypeOfFilename(filename: string | undefined): string | undefined {
  if (filename === undefined) return undefined;
  const dot = filename.lastIndexOf('.');
  return dot < 0 ? undefined : MEDIA_TYPES[filename.slice(dot + 1).toLowerCase()];
}

/** A data: URL as base64 with its media type (percent-encoded data is re-encoded as base64). */
function dataUrlSource(url: string, param: string, fallbackMediaType: string | undefined): MediaSource {
  const match = DATA_URL.exec(url);
  if (!match) throw unreadable(param, 'is not a valid data: URL (data:<media type>;base64,<data>).');
  const mediaType = match[1] !== undefined && match[1] !== '' ? match[1].toLowerCase() : fallbackMediaType;
  if (mediaType === undefined) throw unreadable(param, 'is a data: URL without a media type (data:<media type>;base64,<data>).');
  const payload = url.slice(match[0].length);
  const isBase64 = (match[2] ?? '').toLowerCase().split(';').includes('base64');
  if (!isBase64) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(payload);
    } catch {
      throw unreadable(param, 'is a data: URL whose percent-encoded data cannot be decoded.');
    }
    return { kind: 'base64', mediaType, data: Buffer.from(decoded, 'utf8').toString('base64') };
  }
  if (!BASE64.test(payload)) throw unreadable(param, 'is a data: URL whose data is not base64.');
  return { kind: 'base64', mediaType, data: payload };
}

/** A URL the caller gave for an image or a file: inline data, or a URL the provider fetches. */
function urlSource(url: string, param: string, fallbackMediaType: string | undefined): MediaSource {
  if (url.slice(0, 5).toLowerCase() === 'data:') return dataUrlSource(url, param, fallbackMediaType);
  if (HTTP_URL.test(url)) return { kind: 'url', url };
  throw unreadable(param, 'must be a data: URL or an http(s) URL.');
}

/** `input_image`: `image_url` (data: or http(s) URL) or `file_id`, and the `detail` hint. */
export function imagePart(part: Record<string, unknown>, param: string): ImagePart {
  const fileId = optionalString(part, 'file_id', param);
  const imageUrl = optionalString(part, 'image_url', param);
  let source: MediaSource;
  if (imageUrl !== undefined) source = urlSource(imageUrl, `${param}.image_url`, undefined);
  else if (fileId !== undefined) source = { kind: 'file-id', fileId };
  else throw unreadable(`${param}.image_url`, 'an input_image needs an image_url (a data: or https: URL) or a file_id.');
  const image: ImagePart = { type: 'image', source };
  const detail = optionalString(part, 'detail', param);
  if (detail !== undefined) image.detail = detail;
  return image;
}

/** `input_file`: inline `file_data` (a data: URL, or bare base64 typed by its filename), `file_id` or `file_url`. */
export function filePart(part: Record<string, unknown>, param: string): FilePart {
  const filename = optionalString(part, 'filename', param);
  const fileId = optionalString(part, 'file_id', param);
  const fileUrl = optionalString(part, 'file_url', param);
  const fileData = optionalString(part, 'file_data', param);
  let source: MediaSource;
  if (fileData !== undefined) {
    const fallback = mediaTypeOfFilename(filename) ?? 'application/octet-stream';
    if (fileData.slice(0, 5).toLowerCase() === 'data:') source = dataUrlSource(fileData, `${param}.file_data`, fallback);
    else if (BASE64.test(fileData)) source = { kind: 'base64', mediaType: fallback, data: fileData };
    else throw unreadable(`${param}.file_data`, 'must be a data: URL or base64 data.');
  } else if (fileId !== undefined) source = { kind: 'file-id', fileId };
  else if (fileUrl !== undefined) {
    if (!HTTP_URL.test(fileUrl)) throw unreadable(`${param}.file_url`, 'must be an http(s) URL.');
    source = { kind: 'url', url: fileUrl };
    const mediaType = mediaTypeOfFilename(filename);
    if (mediaType !== undefined) source.mediaType = mediaType;
  } else throw unreadable(param, 'an input_file needs file_data, file_id or file_url.');
  const file: FilePart = { type: 'file', source };
  if (filename !== undefined) file.filename = filename;
  return file;
}

/** A part of a function call's output array: text, image or file. */
export function toolOutputPart(part: unknown, param: string): FilePart | ImagePart | { type: 'text'; text: string } {
  if (!isRecord(part)) throw unreadable(param, 'must be a content part object.');
  switch (part['type']) {
    case 'input_text':
    case 'output_text':
    case 'text': {
      const text = part['text'];
      if (typeof text !== 'string') throw unreadable(`${param}.text`, 'must be a string.');
      return { type: 'text', text };
    }
    case 'input_image':
      return imagePart(part, param);
    case 'input_file':
      return filePart(part, param);
    default:
      throw unreadable(`${param}.type`, 'a function_call_output part must be input_text, input_image or input_file.');
  }
}
