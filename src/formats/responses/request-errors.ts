// The one error of the request converters: a field the converter cannot read, named by its path in
// the caller's body (`input[2].content[0].image_url`), in the nested envelope's `param`.
import { GatewayError } from '../../http/errors';

export function unreadable(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', `${param}: ${message}`, { param });
}

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A required string field, or a 400 naming it. */
export function requiredString(holder: Record<string, unknown>, key: string, param: string): string {
  const value = holder[key];
  if (typeof value !== 'string') throw unreadable(`${param}.${key}`, 'must be a string.');
  return value;
}

/** An optional string field (absent or null: undefined), or a 400 naming it. */
export function optionalString(holder: Record<string, unknown>, key: string, param: string): string | undefined {
  const value = holder[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw unreadable(param === '' ? key : `${param}.${key}`, 'must be a string.');
  return value;
}
