// Who is calling, by network address, for limits that apply before anyone is authenticated.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * The address of the client that sent `req`: the connection's peer, or with server.trustProxy the
 * last X-Forwarded-For entry, the address the proxy in front of the gateway saw. Entries before it
 * are whatever the client chose to send (a proxy appends to the header it received), so taking the
 * first would let every request pick its own address. Null when neither is known.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string | null {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for'];
    // Several X-Forwarded-For headers are one list, in order.
    const entries = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
    const forwarded = ipOf(entries[entries.length - 1] ?? '');
    if (forwarded !== null) return forwarded;
  }
  return ipOf(req.socket.remoteAddress ?? '');
}

/** The IP address in an address entry: bare, or with a port (`1.2.3.4:5678`, `[::1]:5678`) as some proxies write it. */
function ipOf(entry: string): string | null {
  let value = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) value = bracketed[1] as string;
  else if (/^[\d.]+:\d+$/.test(value)) value = value.slice(0, value.indexOf(':'));
  value = value.replace(/%.*$/, ''); // an IPv6 zone (fe80::1%eth0) names our interface, not the client
  return isIP(value) === 0 ? null : value;
}

/**
 * The key a per-address limit counts under: an IPv4 address (also when written IPv4-mapped,
 * `::ffff:1.2.3.4`), or an IPv6 address's /64 network, since one client is commonly handed a whole
 * /64 and could otherwise take a fresh address for every request.
 */
export function addressKey(address: string): string {
  if (isIP(address) === 4) return address;
  const groups = ipv6Groups(address);
  if (groups === null) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 part converted). */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  const parts = tail === undefined ? left : [...left, ...Array<string>(missing).fill('0'), ...right];
  return parts.length === 8 ? parts.map((p) => parseInt(p, 16)) : null;
}
