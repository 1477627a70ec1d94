// SSRF guard for URLs that come from a request or a tool (an image or file the gateway fetches, a
// download, a browser navigation, an MCP server named in a request): such a URL must not let a caller
// reach loopback, private, link-local or other special-purpose addresses. A provider's baseUrl is not
// one of them: it comes from the operator and is trusted as written. Names are checked at connect time
// through the socket's DNS lookup, so a rebinding answer cannot slip past a check made earlier; IP
// literals (which never hit the lookup) are checked up front.
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';

/** Special-purpose ranges (RFC 6890 and its registries) that no request-supplied URL may reach. */
function buildBlockList(): BlockList {
  const list = new BlockList();
  const v4: [string, number][] = [
    ['0.0.0.0', 8], // "this" network
    ['10.0.0.0', 8], // RFC 1918
    ['100.64.0.0', 10], // RFC 6598 carrier-grade NAT
    ['127.0.0.0', 8], // loopback
    ['169.254.0.0', 16], // RFC 3927 link-local (cloud metadata endpoints live here)
    ['172.16.0.0', 12], // RFC 1918
    ['192.0.0.0', 24], // IETF protocol assignments
    ['192.0.2.0', 24], // RFC 5737 TEST-NET-1
    ['192.168.0.0', 16], // RFC 1918
    ['198.18.0.0', 15], // RFC 2544 benchmarking
    ['198.51.100.0', 24], // RFC 5737 TEST-NET-2
    ['203.0.113.0', 24], // RFC 5737 TEST-NET-3
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved + broadcast
  ];
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  const v6: [string, number][] = [
    ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d (RFC 4291)
    ['64:ff9b::', 96], // RFC 6052 NAT64: reaches whatever IPv4 address it embeds
    ['64:ff9b:1::', 48], // RFC 8215 local-use NAT64
    ['100::', 64], // RFC 6666 discard
    ['2001:db8::', 32], // RFC 3849 documentation
    ['2002::', 16], // RFC 3056 6to4: reaches the IPv4 address it embeds
    ['fc00::', 7], // RFC 4193 unique local
    ['fe80::', 10], // link-local
    ['fec0::', 10], // RFC 3879 deprecated site-local
    ['ff00::', 8], // multicast
  ];
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

const BLOCKED = buildBlockList();

/**
 * True when the address is loopback, private, link-local or otherwise not a public unicast address.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d, in either notation) is judged as its IPv4 address:
 * BlockList does that itself.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) return BLOCKED.check(address.toLowerCase(), 'ipv6');
  return false;
}

export class SsrfBlockedError extends Error {
  readonly code = 'ERR_SSRF_BLOCKED';
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(`upstream host ${host} resolves to a non-public address (${address})`);
    this.name = 'SsrfBlockedError';
  }
}

/** Strips the brackets of an IPv6 URL host. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** Throws SsrfBlockedError when the URL's host is a private IP literal. */
export function assertPublicLiteral(hostname: string): void {
  const host = bareHost(hostname);
  if (isIP(host) !== 0 && isPrivateAddress(host)) throw new SsrfBlockedError(host, host);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A dns.lookup replacement for socket connect options that refuses non-public answers. */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) {
      callback(err, options.all ? [] : '', undefined);
      return;
    }
    const blocked = addresses.find((entry) => isPrivateAddress(entry.address));
    if (blocked) {
      callback(new SsrfBlockedError(hostname, blocked.address) as unknown as NodeJS.ErrnoException, options.all ? [] : '', undefined);
      return;
    }
    if (options.all) {
      callback(null, addresses);
      return;
    }
    const first = addresses[0];
    if (!first) {
      callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', undefined);
      return;
    }
    callback(null, first.address, first.family);
  });
}
