// TEMPORARY during development: an operation whose handler is being built answers 501. Nothing may
// import this file when the work lands (test/conventions checks it).
import { GatewayError } from '../http/errors';
import type { Handler } from './types';

export function pending(operationId: string): Handler {
  return async () => {
    throw new GatewayError('not_implemented', `${operationId} is not built yet.`);
  };
}
