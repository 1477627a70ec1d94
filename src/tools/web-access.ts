// Outbound HTTP for URLs that come from a request or a tool (a download, a browser navigation, an MCP
// server named in a request): through the SSRF guard (src/providers/http/ssrf-guard.ts), unless the
// operator allow-listed the host (tools.allowHosts), with bounded time, size and redirects. Each
// redirect hop is checked again. An egress profile (an organization's proxy, svc_vpn_connect) sends
// the request out through that proxy; the target's addresses are still checked here first.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup as dnsLookupAsync } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch, request, type Dispatcher } from 'undici';
import { assertPublicLiteral, bareHost, guardedLookup, isPrivateAddress, SsrfBlockedError } from '../providers/http/ssrf-guard';
import { proxyDispatcher } from './egress-proxy';

export interface GuardedFetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
  /** Largest body read; past it the read stops and `truncated` is set (default 10 MiB). */
  maxBytes?: number;
  /** Whole-request time limit (default 30 s). */
  timeoutMs?: number;
  /** Redirects followed, each checked like the first URL (default 5). */
  maxRedirects?: number;
  /** An egress proxy (http://, https://, socks5://, socks5h://) to go out through. */
  proxyUrl?: string;
}

export interface GuardedResponse {
  /** The final URL (after redirects). */
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
}

export type GuardedFetch = (url: string, options?: GuardedFetchOptions) => Promise<GuardedResponse>;

export class WebAccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebAccessError';
  }
}

/** Host names (or `host:port`) the operator trusts: never checked by the guard. */
export class HostAllowList {
  private readonly entries: Set<string>;
  constructor(entries: readonly string[]) {
    this.entries = new Set(entries.map((entry) => entry.toLowerCase()));
  }
  allows(url: URL): boolean {
    const host = bareHost(url.hostname).toLowerCase();
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return this.entries.has(host) || this.entries.has(`${host}:${port}`);
  }
}

/** Checks the URL before a connection: scheme, and a private IP literal (names are checked at connect). */
export function checkUrl(raw: string | URL, allow: HostAllowList): URL {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new WebAccessError(`Not a valid URL: ${String(raw).slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebAccessError(`Only http and https URLs can be fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new WebAccessError('URLs with credentials are not fetched.');
  if (!allow.allows(url)) assertPublicLiteral(url.hostname);
  return url;
}

/** A lookup that checks answers unless the host is allow-listed (also the browser's guard proxy's). */
export function lookupFor(allow: HostAllowList): typeof guardedLookup {
  return (hostname, options: LookupOptions, callback) => {
    if (allow.allows(new URL(`http://${isIP(hostname) === 6 ? `[${hostname}]` : hostname}`))) {
      dnsLookup(hostname, options, callback as unknown as (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family: number) => void);
      return;
    }
    guardedLookup(hostname, options, callback);
  };
}

/** Through a proxy the target is resolved here first: a name that answers with a private address is refused. */
export async function checkViaDns(url: URL, allow: HostAllowList): Promise<void> {
  if (allow.allows(url)) return;
  const host = bareHost(url.hostname);
  if (isIP(host) !== 0) return; // literals were checked by checkUrl
  const addresses = await dnsLookupAsync(host, { all: true });
  const blocked = addresses.find((entry) => isPrivateAddress(entry.address));
  if (blocked) throw new SsrfBlockedError(host, blocked.address);
}

export interface WebAccess {
  fetch: GuardedFetch;
  /** A WHATWG fetch for libraries that take one (the MCP client): the same guard, redirects not followed. */
  fetchFunction(proxyUrl?: string): typeof fetch;
  /** The undici dispatcher of the guard (direct or through `proxyUrl`). */
  dispatcher(proxyUrl?: string): Dispatcher;
  readonly allow: HostAllowList;
  close(): Promise<void>;
}

export function createWebAccess(allowHosts: readonly string[]): WebAccess {
  const allow = new HostAllowList(allowHosts);
  const direct = new Agent({ connect: { lookup: lookupFor(allow) }, keepAliveTimeout: 10_000 });
  const proxies = new Map<string, Dispatcher>();
  const dispatcher = (proxyUrl?: string): Dispatcher => {
    if (!proxyUrl) return direct;
    let agent = proxies.get(proxyUrl);
    if (!agent) {
      agent = proxyDispatcher(proxyUrl);
      proxies.set(proxyUrl, agent);
    }
    return agent;
  };

  const guardedFetch: GuardedFetch = async (raw, options = {}) => {
    const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let url = checkUrl(raw, allow);
    let method = options.method ?? 'GET';
    let body = options.body;
    for (let hop = 0; ; hop += 1) {
      if (options.proxyUrl) await checkViaDns(url, allow);
      const reply = await request(url, {
        method: method as Dispatcher.HttpMethod,
        headers: options.headers ?? {},
        ...(body !== undefined ? { body } : {}),
        signal,
        dispatcher: dispatcher(options.proxyUrl),
      }).catch((err: unknown) => {
        throw describe(err, url);
      });
      const location = reply.headers['location'];
      if (reply.statusCode >= 300 && reply.statusCode < 400 && typeof location === 'string') {
        await reply.body.dump();
        if (hop >= (options.maxRedirects ?? 5)) throw new WebAccessError(`Too many redirects fetching ${url.origin}.`);
        url = checkUrl(new URL(location, url), allow);
        if (reply.statusCode === 303 || ((reply.statusCode === 301 || reply.statusCode === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of reply.body as AsyncIterable<Buffer>) {
        if (size + chunk.length > maxBytes) {
          chunks.push(chunk.subarray(0, maxBytes - size));
          size = maxBytes;
          truncated = true;
          reply.body.destroy();
          break;
        }
        chunks.push(chunk);
        size += chunk.length;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(reply.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      return { url: url.toString(), status: reply.statusCode, headers, body: Buffer.concat(chunks), truncated };
    }
  };

  return {
    allow,
    fetch: guardedFetch,
    dispatcher,
    fetchFunction(proxyUrl) {
      return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
        const target = typeof input === 'string' || input instanceof URL ? input : input.url;
        const url = checkUrl(String(target), allow);
        if (proxyUrl) await checkViaDns(url, allow);
        return undiciFetch(url, { ...(init as object), redirect: 'manual', dispatcher: dispatcher(proxyUrl) } as Parameters<typeof undiciFetch>[1]);
      }) as unknown as typeof fetch;
    },
    async close() {
      await Promise.all([direct.close(), ...[...proxies.values()].map((agent) => agent.close())]);
    },
  };
}

function describe(err: unknown, url: URL): Error {
  if (err instanceof SsrfBlockedError || (err as { code?: string })?.code === 'ERR_SSRF_BLOCKED') {
    return new WebAccessError(`${url.hostname} is not reachable from this gateway (a private or special-purpose address).`);
  }
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof SsrfBlockedError)
    return new WebAccessError(`${url.hostname} is not reachable from this gateway (a private or special-purpose address).`);
  if (err instanceof Error && err.name === 'TimeoutError') return new WebAccessError(`Fetching ${url.origin} took too long.`);
  return new WebAccessError(`Fetching ${url.origin} failed: ${err instanceof Error ? err.message : String(err)}`);
}
