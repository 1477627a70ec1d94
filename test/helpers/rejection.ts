// The GatewayError a promise rejects with or a function throws; fails the test on anything else.
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';

export async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

/** What the error must say besides its param: status 400 unless given; code and message when given. */
export interface ExpectedError {
  status?: number;
  code?: string;
  message?: RegExp;
}

/** Asserts that `fn` throws a GatewayError naming `param` (a converter refusing a field of the caller's body). */
export function throwsNaming(fn: () => unknown, param: string, expected: ExpectedError = {}): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    assert.equal(err.status, expected.status ?? 400, err.message);
    assert.equal(err.param, param, err.message);
    if (expected.code !== undefined) assert.equal(err.code, expected.code, err.message);
    if (expected.message) assert.match(err.message, expected.message);
    return true;
  });
}
