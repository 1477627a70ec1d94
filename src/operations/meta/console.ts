// The web console (README "Console"): the single-page app built by `npm run build` (vite) into
// dist/console, served by the gateway itself. The files are read once into memory and looked up by
// exact name, so a request path never becomes a filesystem path (no traversal, nothing outside the
// build is reachable). Hashed assets are immutable; the page is revalidated on every load.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import mime from 'mime-types';
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';

/**
 * Scripts, styles, images and connections from this gateway only; no inline script, no framing, no
 * plugin, no <base>. The app needs nothing more (its styles are a file, its charts inline SVG).
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';

interface ConsoleFile {
  contentType: string;
  data: Buffer;
}

/** dist/console, from src/operations/meta (tsx) or dist/src/operations/meta (built). */
export function consoleBuildDir(): string {
  const up = path.resolve(__dirname, '../../..');
  return path.basename(up) === 'dist' ? path.join(up, 'console') : path.join(up, 'dist', 'console');
}

async function readTree(dir: string, prefix = ''): Promise<Map<string, ConsoleFile>> {
  const files = new Map<string, ConsoleFile>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const relative = prefix + entry.name;
    if (entry.isDirectory()) {
      for (const [name, file] of await readTree(path.join(dir, entry.name), `${relative}/`)) files.set(name, file);
    } else if (entry.isFile()) {
      const type = mime.contentType(entry.name) || 'application/octet-stream';
      files.set(relative, { contentType: type, data: await readFile(path.join(dir, entry.name)) });
    }
  }
  return files;
}

let build: Promise<Map<string, ConsoleFile> | null> | undefined;
/** The build's files by path relative to dist/console; null when the console was not built. */
function consoleFiles(): Promise<Map<string, ConsoleFile> | null> {
  build ??= readTree(consoleBuildDir()).then(
    (files) => (files.has('index.html') ? files : null),
    () => null,
  );
  return build;
}

async function page(): Promise<ConsoleFile> {
  const files = await consoleFiles();
  const index = files?.get('index.html');
  if (!index) throw new GatewayError('not_found', 'The console is not built (run npm run build).');
  return index;
}

export const getConsole: Handler = async () => {
  const index = await page();
  return { status: 200, headers: { ...SECURITY_HEADERS, 'cache-control': 'no-cache' }, raw: { contentType: index.contentType, data: index.data } };
};

export const getConsoleFile: Handler = async (ctx) => {
  const name = ctx.params['path'] ?? '';
  const index = await page();
  const file = (await consoleFiles())?.get(name);
  if (file && name !== 'index.html') {
    const caching = name.startsWith('assets/') ? IMMUTABLE : 'no-cache';
    return { status: 200, headers: { ...SECURITY_HEADERS, 'cache-control': caching }, raw: { contentType: file.contentType, data: file.data } };
  }
  // A hashed asset that is not in this build (an old page after an upgrade) must not get the page.
  if (name.startsWith('assets/')) throw new GatewayError('not_found', 'No such console file.');
  return { status: 200, headers: { ...SECURITY_HEADERS, 'cache-control': 'no-cache' }, raw: { contentType: index.contentType, data: index.data } };
};
