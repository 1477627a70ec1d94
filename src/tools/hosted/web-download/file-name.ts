// The name a download is saved under when the model names no file: the server's Content-Disposition
// filename (RFC 6266, parsed by the `content-disposition` library), else the last segment of the final
// URL's path, reduced to characters safe in any file system.
import { parse as parseContentDisposition } from 'content-disposition';

const MAX_NAME_LENGTH = 100;

export function downloadFileName(finalUrl: string, contentDisposition: string | undefined): string {
  let name = '';
  if (contentDisposition) {
    try {
      name = parseContentDisposition(contentDisposition).parameters['filename'] ?? '';
    } catch {
      name = ''; // a malformed header is the server's problem: fall back to the URL
    }
  }
  if (!name) {
    const segment = new URL(finalUrl).pathname.split('/').pop() ?? '';
    try {
      name = decodeURIComponent(segment);
    } catch {
      name = segment;
    }
  }
  // Only the last component of whatever the server said: never a directory of its choosing.
  const base = name.split(/[\\/]/).pop() ?? '';
  const safe = base
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(-MAX_NAME_LENGTH);
  return safe === '' ? 'download' : safe;
}

/** `name`, or `name-1.ext`, `name-2.ext`, … : the n-th alternative when the name is taken. */
export function numbered(name: string, n: number): string {
  if (n === 0) return name;
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}-${n}${name.slice(dot)}` : `${name}-${n}`;
}
