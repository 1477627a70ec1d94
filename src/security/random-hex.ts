// Random hex for identifiers (conversation and item ids): drawn from a pool filled from the CSPRNG a few
// kilobytes at a time, as Node's randomUUID() does, instead of a randomBytes() call (a buffer and a call
// into OpenSSL) per id. Each byte of the pool is handed out once. Not for secrets (keys, tokens): those
// keep their own randomBytes(), so no future secret waits in a long-lived buffer.
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafeSlow(POOL_BYTES);
let offset = POOL_BYTES;

/** `bytes` random bytes (at most the pool's size) as lowercase hex. */
export function randomHex(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes <= 0 || bytes > POOL_BYTES) throw new RangeError(`randomHex: 1 to ${POOL_BYTES} bytes, not ${bytes}`);
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}
