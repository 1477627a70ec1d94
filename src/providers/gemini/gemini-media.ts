// Where the bytes of an image, file or document are (a canonical MediaSource) to the Gemini part that
// carries them: base64 bytes and data: URLs as `inlineData`, https:, gs: and Gemini `files/` references
// as `fileData` (Gemini fetches them; the MIME type it needs comes from the source or the name's
// extension), plain text as a text part.
import type { MediaSource } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import type { GeminiPart } from './gemini-wire-types';

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

export function mimeFromName(name: string | undefined, fallback: string): string {
  const extension = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(name ?? '')?.[1]?.toLowerCase();
  return (extension && MIME_BY_EXTENSION[extension]) || fallback;
}

/** `data:<mime>[;base64],<payload>` to an inlineData blob (a payload that is not base64 is encoded). */
export function parseDataUrl(url: string): { mimeType: string; data: string } | null {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!match) return null;
  const mimeType = match[1] || 'application/octet-stream';
  const isBase64 = /;base64/i.test(match[2] ?? '');
  const payload = match[3] ?? '';
  return { mimeType, data: isBase64 ? payload : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64') };
}

function referencePart(uri: string, mimeType: string, param: string): GeminiPart {
  if (!/^(https?|gs):\/\//i.test(uri) && !uri.startsWith('files/')) {
    throw new GatewayError('bad_request', 'Media for a Gemini model must be bytes, a data:, https: or gs: URL, or a Gemini files/ reference.', { param });
  }
  return { fileData: { mimeType, fileUri: uri } };
}

/**
 * The Gemini part for `source`. `fallbackMime` is used when neither the source nor `name` says what
 * the bytes are (image/jpeg for images, application/pdf for files and documents).
 */
export function mediaSourceToPart(source: MediaSource, fallbackMime: string, name: string | undefined, param: string): GeminiPart {
  switch (source.kind) {
    case 'base64':
      return { inlineData: { mimeType: source.mediaType, data: source.data } };
    case 'text':
      return { text: source.data };
    case 'url': {
      if (source.url.startsWith('data:')) {
        const blob = parseDataUrl(source.url);
        if (!blob) throw new GatewayError('bad_request', 'The data: URL is malformed.', { param });
        return { inlineData: blob };
      }
      return referencePart(source.url, source.mediaType ?? mimeFromName(name ?? source.url, fallbackMime), param);
    }
    case 'file-id':
      return referencePart(source.fileId, mimeFromName(name ?? source.fileId, fallbackMime), param);
  }
}
