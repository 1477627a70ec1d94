// A captured request as a curl command line for a POSIX shell (sh, bash, zsh): the method, URL,
// the headers the browser sent (cookies and authorization included: the user asked for the request)
// and the body, each argument quoted so that the shell passes it through unchanged.

/** Characters an argument may hold and still be written without quotes. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One shell word: bare when plain, else in single quotes (inside which only ' needs care: '\''). */
export function shellQuote(value: string): string {
  if (PLAIN.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Headers curl writes itself from the command (length, host) or that describe the connection. */
const LEFT_TO_CURL = new Set([
  'content-length',
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'upgrade',
  'proxy-connection',
  'proxy-authorization',
]);

export interface CurlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The body as text (it is UTF-8 without NUL), or a file the caller stored it in (`@path`), or none. */
  body: { text: string } | { file: string } | null;
}

/** True when a body can be written on the command line: valid UTF-8 without NUL. */
export function isTextBody(body: Buffer): boolean {
  return !body.includes(0) && Buffer.from(body.toString('utf8'), 'utf8').equals(body);
}

export function curlCommand(request: CurlRequest): string {
  const words: string[] = ['curl'];
  const method = request.method.toUpperCase();
  // curl sends GET without a body and POST with one: -X only when the method is anything else.
  const implied = request.body === null ? 'GET' : 'POST';
  if (method !== implied) words.push('-X', shellQuote(method));
  // [ ] { } in a URL are curl's globbing syntax unless --globoff.
  if (/[[\]{}]/.test(request.url)) words.push('--globoff');
  words.push(shellQuote(request.url));
  let compressed = false;
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    // HTTP/2 pseudo-headers (:authority, :path) come from the URL.
    if (lower.startsWith(':') || LEFT_TO_CURL.has(lower)) continue;
    if (lower === 'accept-encoding') {
      // curl asks for the encodings it can decode and decodes them, instead of printing compressed bytes.
      compressed = true;
      continue;
    }
    // Playwright joins repeated headers with a newline; each is its own -H.
    for (const part of value.split('\n')) {
      // `-H 'name:'` would remove the header; `name;` sends it empty.
      words.push('-H', shellQuote(part === '' ? `${name};` : `${name}: ${part}`));
    }
  }
  if (request.body !== null) {
    // --data-raw: a leading @ in the text is not a file name. --data-binary @file: the bytes as stored.
    if ('text' in request.body) words.push('--data-raw', shellQuote(request.body.text));
    else words.push('--data-binary', shellQuote(`@${request.body.file}`));
  }
  if (compressed) words.push('--compressed');
  return words.join(' ');
}
