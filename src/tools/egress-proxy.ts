// The undici dispatcher for an egress profile's proxy URL (svc_vpn_connect): an HTTP(S) proxy through
// undici's ProxyAgent (CONNECT tunnels), a SOCKS5 proxy through fetch-socks (undici's own agents speak
// no SOCKS). Either way the proxy is the operator's: it is reached directly, not through the SSRF guard;
// the target's addresses are checked before each request (web-access.ts). Errors never repeat the URL,
// which may hold the proxy's password.
import { socksDispatcher } from 'fetch-socks';
import { ProxyAgent, type Dispatcher } from 'undici';
import { egressProxyProblem } from '../config/tool-checks';

/** SOCKS5's default port (RFC 1928 §3). */
const SOCKS_DEFAULT_PORT = 1080;

export class EgressProxyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EgressProxyError';
  }
}

export function proxyDispatcher(proxyUrl: string): Dispatcher {
  const problem = egressProxyProblem(proxyUrl);
  if (problem !== null) throw new EgressProxyError(`The egress proxy URL ${problem}.`);
  const url = new URL(proxyUrl);
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    // ProxyAgent sends user:password@ as a Basic Proxy-Authorization header.
    return new ProxyAgent({ uri: proxyUrl });
  }
  // socks5 and socks5h alike: the target's name goes to the proxy, which resolves it (the gateway
  // resolved and checked it first; a name that answers privately here is refused before this).
  return socksDispatcher({
    type: 5,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : SOCKS_DEFAULT_PORT,
    ...(url.username ? { userId: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
  });
}

/** `text` with the proxy URL and its credentials blanked out (for a message a model or a log sees). */
export function withoutProxySecrets(text: string, proxyUrl: string | null): string {
  if (!proxyUrl) return text;
  let out = text.split(proxyUrl).join('[egress proxy]');
  try {
    const url = new URL(proxyUrl);
    for (const secret of [url.password, decodeURIComponent(url.password), url.username, decodeURIComponent(url.username)]) {
      if (secret.length >= 3) out = out.split(secret).join('***');
    }
  } catch {
    // An unparseable URL was refused before any request: nothing more to blank.
  }
  return out;
}
