// How a stored file's bytes are answered (GET …/content and a share link): with the file's media type,
// as an attachment, and with headers that keep a browser from running it on the gateway's origin (an
// uploaded HTML or SVG file would otherwise execute there with the origin's rights).
import contentDisposition from 'content-disposition';
import type { StoredFileRecord } from '../../store/types';
import type { Reply } from '../types';

/**
 * An ASCII stand-in for a non-ASCII name (accents dropped, other characters `_`): the header then
 * carries it as `filename` and the real name as `filename*` (RFC 6266), so it stays pure ASCII (a
 * Latin-1 `filename`, the library's default for such names, is decoded differently by clients).
 */
function asciiFallback(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '_');
}

export function fileContentReply(file: StoredFileRecord, content: Buffer): Reply {
  return {
    status: 200,
    headers: {
      'content-length': String(content.length),
      'content-disposition': contentDisposition(file.filename, { type: 'attachment', fallback: asciiFallback(file.filename) }),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cache-control': 'private, no-store',
    },
    raw: { contentType: file.mediaType, data: content },
  };
}
