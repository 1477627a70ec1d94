// Typed readers for the fields of a caller's body, shared by the format converters. A field that is
// absent or null is "not set" (SDKs send null for options they leave unset); a field of the wrong type
// is a 400 naming it, so a translated call never sends the upstream a guess.
import { GatewayError } from '../../http/errors';
import type { JsonObject } from '../../canonical/model';

export const isRecord = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

export function badRequest(message: string, param: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

/** A number, or undefined when unset. */
export function readNumber(body: JsonObject, key: string, param: string = key): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest(`${param} must be a number.`, param);
  return value;
}

/** An integer, or undefined when unset. */
export function readInteger(body: JsonObject, key: string, param: string = key): number | undefined {
  const value = readNumber(body, key, param);
  if (value !== undefined && !Number.isInteger(value)) throw badRequest(`${param} must be an integer.`, param);
  return value;
}

export function readString(body: JsonObject, key: string, param: string = key): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${param} must be a string.`, param);
  return value;
}

export function readBoolean(body: JsonObject, key: string, param: string = key): boolean | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw badRequest(`${param} must be a boolean.`, param);
  return value;
}

/** A string or an array of strings (OpenAI `stop`), as an array; undefined when unset or empty. */
export function readStringList(body: JsonObject, key: string, param: string = key): string[] | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string')) {
    throw badRequest(`${param} must be a string or an array of strings.`, param);
  }
  return value.length > 0 ? [...value] : undefined;
}

/** The fields of `body` not named in `known` (and not null), for ModelRequest.extra. */
export function unknownFields(body: JsonObject, known: ReadonlySet<string>): JsonObject | undefined {
  let extra: JsonObject | undefined;
  for (const [key, value] of Object.entries(body)) {
    if (known.has(key) || value === undefined || value === null) continue;
    (extra ??= {})[key] = value;
  }
  return extra;
}
