// The undici dispatcher a provider's calls go through: keep-alive pools per origin (undici's Agent),
// TLS verified against Node's CAs or an operator-configured CA file (never switched off), HTTP/2 when
// the provider opts in (negotiated by ALPN, so https origins only; plain-http origins stay on HTTP/1.1),
// and the corporate egress proxy named by HTTPS_PROXY / HTTP_PROXY / NO_PROXY when one is set.
import { readFileSync } from 'node:fs';
import { Agent, EnvHttpProxyAgent, type Dispatcher } from 'undici';

export interface DispatcherSettings {
  connectMs: number;
  /** Longest an idle connection is kept when the server gave no keep-alive hint. */
  keepAliveMs: number;
  http2: boolean;
  /** PEM file of the CA(s) trusted for https upstreams instead of Node's bundled ones. */
  caFile?: string;
}

export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

/** The proxy variables as curl and undici read them (lowercase first), or null when no proxy is set. */
export function proxyFromEnv(env: NodeJS.ProcessEnv): ProxySettings | null {
  const httpProxy = env['http_proxy'] || env['HTTP_PROXY'];
  const httpsProxy = env['https_proxy'] || env['HTTPS_PROXY'];
  if (!httpProxy && !httpsProxy) return null;
  const noProxy = env['no_proxy'] || env['NO_PROXY'];
  return {
    ...(httpProxy ? { httpProxy } : {}),
    ...(httpsProxy ? { httpsProxy } : {}),
    // Passed even when empty: undici would otherwise re-read the environment on every request.
    noProxy: noProxy ?? '',
  };
}

export function createUpstreamDispatcher(settings: DispatcherSettings, env: NodeJS.ProcessEnv = process.env): Dispatcher {
  const ca = settings.caFile !== undefined ? readFileSync(settings.caFile) : undefined;
  const tls = { timeout: settings.connectMs, ...(ca !== undefined ? { ca } : {}) };
  const common = {
    keepAliveTimeout: settings.keepAliveMs,
    allowH2: settings.http2,
    // Our own timeouts are set per request (transport.ts); these only stop undici's defaults applying.
    headersTimeout: 0,
    bodyTimeout: 0,
  };
  const proxy = proxyFromEnv(env);
  if (proxy === null) return new Agent({ ...common, connect: tls });
  // Direct (NO_PROXY) origins use `connect`; proxied ones tunnel with `requestTls` to the origin.
  return new EnvHttpProxyAgent({ ...common, ...proxy, connect: tls, requestTls: tls, proxyTls: { timeout: settings.connectMs } });
}
