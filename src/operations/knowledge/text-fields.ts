import { GatewayError } from '../../http/errors';

/**
 * A NUL character in stored text is refused with a 400 naming the field: neither PostgreSQL text nor
 * jsonb can hold one (the write would fail as a 500), and no document needs one.
 */
export function refuseNul(value: unknown, param: string): void {
  const texts = typeof value === 'string' ? [value] : value !== null && typeof value === 'object' ? Object.entries(value).flat() : [];
  if (texts.some((text) => typeof text === 'string' && text.includes('\0'))) {
    throw new GatewayError('bad_request', `Invalid request: '${param}' must not contain a NUL character.`, { param });
  }
}
