// A structural check of PNG bytes, so a test can tell a real image from anything else.
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';

/** Checks the PNG structure: signature, IHDR first with a nonzero size, every chunk's CRC, IEND last. */
export function assertPng(png: Buffer): { width: number; height: number } {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  let at = 8;
  const types: string[] = [];
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('latin1');
    const crc = png.readUInt32BE(at + 8 + length);
    assert.equal(crc32(png.subarray(at + 4, at + 8 + length)), crc, `CRC of ${type}`);
    types.push(type);
    at += 12 + length;
  }
  assert.equal(at, png.length, 'chunks end at the end of the file');
  assert.equal(types[0], 'IHDR');
  assert.ok(types.includes('IDAT'));
  assert.equal(types[types.length - 1], 'IEND');
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  assert.ok(width > 0 && height > 0, `size ${width}x${height}`);
  return { width, height };
}
