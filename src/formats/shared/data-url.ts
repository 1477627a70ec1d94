// RFC 2397 data URLs (`data:<media type>[;params];base64,<data>`): how OpenAI formats carry inline
// images and files. Only base64 payloads are media the canonical model can carry as bytes.
import type { MediaSource } from '../../canonical/model';

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*);base64,(.*)$/s;

/** A base64 data URL → its media type and payload; null for any other string. */
export function parseBase64DataUrl(url: string): { mediaType: string; data: string } | null {
  const match = DATA_URL.exec(url);
  if (!match || match[3] === undefined) return null;
  return { mediaType: match[1] || 'application/octet-stream', data: match[3] };
}

/** The source of an OpenAI image URL: inline bytes for a base64 data URL, otherwise the URL itself. */
export function urlToMediaSource(url: string): MediaSource | null {
  if (url.startsWith('data:')) {
    const parsed = parseBase64DataUrl(url);
    return parsed ? { kind: 'base64', mediaType: parsed.mediaType, data: parsed.data } : null;
  }
  return { kind: 'url', url };
}
