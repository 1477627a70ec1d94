// The GatewayError a promise rejects with; fails the test when it resolves or rejects with anything else.
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
