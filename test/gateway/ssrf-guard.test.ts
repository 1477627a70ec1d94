import assert from 'node:assert/strict';
import { isPrivateAddress } from '../../src/providers/http/ssrf-guard';

// The ranges the guard must refuse, written out independently of the module (CIDR math in BigInt):
// for each, its first and last address are refused, and the addresses just outside it are refused
// only when another range of the table covers them.
const V4: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const V6: [string, number][] = [
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

function v4ToBig(address: string): bigint {
  return address.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}
function bigToV4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join('.');
}
function v6ToBig(address: string): bigint {
  const [head = '', tail = ''] = address.split('::');
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const parts = address.includes('::') ? [...headParts, ...Array<string>(8 - headParts.length - tailParts.length).fill('0'), ...tailParts] : headParts;
  return parts.reduce((acc, part) => (acc << 16n) | BigInt(parseInt(part, 16)), 0n);
}
function bigToV6(value: bigint): string {
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16));
  return groups.join(':');
}

interface Range {
  first: bigint;
  last: bigint;
}
function range(base: bigint, prefix: number, bits: number): Range {
  const size = 1n << BigInt(bits - prefix);
  return { first: base, last: base + size - 1n };
}
const V4_RANGES = V4.map(([net, prefix]) => range(v4ToBig(net), prefix, 32));
const V6_RANGES = V6.map(([net, prefix]) => range(v6ToBig(net), prefix, 128));
const inside = (ranges: Range[], value: bigint): boolean => ranges.some((r) => value >= r.first && value <= r.last);

describe('SSRF guard block list', () => {
  it('refuses the first and last address of every IPv4 range, and judges the neighbours outside it', () => {
    for (const [i, r] of V4_RANGES.entries()) {
      const label = `${V4[i]![0]}/${V4[i]![1]}`;
      for (const value of [r.first, r.last]) assert.equal(isPrivateAddress(bigToV4(value)), true, `${bigToV4(value)} in ${label}`);
      for (const value of [r.first - 1n, r.last + 1n]) {
        if (value < 0n || value > 0xffffffffn) continue;
        assert.equal(isPrivateAddress(bigToV4(value)), inside(V4_RANGES, value), `${bigToV4(value)} next to ${label}`);
      }
    }
  });

  it('judges an IPv4-mapped IPv6 address (dotted and hex notation) as its IPv4 address', () => {
    for (const r of V4_RANGES) {
      for (const value of [r.first, r.last, r.first - 1n, r.last + 1n]) {
        if (value < 0n || value > 0xffffffffn) continue;
        const expected = inside(V4_RANGES, value);
        const hex = `::ffff:${((value >> 16n) & 0xffffn).toString(16)}:${(value & 0xffffn).toString(16)}`;
        assert.equal(isPrivateAddress(`::ffff:${bigToV4(value)}`), expected, `::ffff:${bigToV4(value)}`);
        assert.equal(isPrivateAddress(hex), expected, hex);
        assert.equal(isPrivateAddress(hex.toUpperCase()), expected, hex.toUpperCase());
      }
    }
  });

  it('refuses the first and last address of every IPv6 range (NAT64, 6to4, IPv4-compatible, site-local included), and judges the neighbours', () => {
    for (const [i, r] of V6_RANGES.entries()) {
      const label = `${V6[i]![0]}/${V6[i]![1]}`;
      for (const value of [r.first, r.last]) assert.equal(isPrivateAddress(bigToV6(value)), true, `${bigToV6(value)} in ${label}`);
      for (const value of [r.first - 1n, r.last + 1n]) {
        if (value < 0n || value >= 1n << 128n) continue;
        // The IPv4-mapped block just past ::/96 is judged by its IPv4 address (the test above).
        if (value >> 32n === 0xffffn) continue;
        assert.equal(isPrivateAddress(bigToV6(value)), inside(V6_RANGES, value), `${bigToV6(value)} next to ${label}`);
      }
    }
  });

  it('lets public unicast addresses through', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001::1', '::ffff:8.8.8.8']) {
      assert.equal(isPrivateAddress(address), false, address);
    }
  });
});
