import type { ErrorObject } from 'ajv';
import { GatewayError } from './errors';

/** A generated AJV standalone validator. */
export interface GeneratedValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** instancePath /messages/0/role -> messages[0].role */
export function fieldPath(instancePath: string, extra?: string): string {
  const segments = instancePath.split('/').slice(1);
  if (extra !== undefined) segments.push(extra);
  return segments.reduce((acc, seg) => {
    const s = seg.replace(/~1/g, '/').replace(/~0/g, '~');
    return /^\d+$/.test(s) ? `${acc}[${s}]` : acc === '' ? s : `${acc}.${s}`;
  }, '');
}

/** Turns the first validation error into a 400 that names the offending field. */
export function validationError(where: 'body' | 'query' | 'path', errors: readonly ErrorObject[] | null | undefined): GatewayError {
  const first = errors?.[0];
  if (!first) return new GatewayError('validation_failed', `Invalid request ${where}.`);
  const params = first.params as Record<string, unknown>;
  let field = fieldPath(first.instancePath);
  let message: string;
  switch (first.keyword) {
    case 'required':
      field = fieldPath(first.instancePath, String(params['missingProperty']));
      message = `'${field}' is required`;
      break;
    case 'additionalProperties':
      field = fieldPath(first.instancePath, String(params['additionalProperty']));
      message = `'${field}' is not a recognised field`;
      break;
    case 'enum':
      message = `'${field}' must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'const':
      message = `'${field}' must be ${JSON.stringify(params['allowedValue'])}`;
      break;
    case 'not':
      message = `'${field}' is not allowed here`;
      break;
    default:
      message = field === '' ? `request ${where} ${first.message ?? 'is invalid'}` : `'${field}' ${first.message ?? 'is invalid'}`;
  }
  const location = where === 'body' ? '' : ` (${where} parameter)`;
  return new GatewayError('validation_failed', `Invalid request: ${message}${location}.`, field === '' ? {} : { param: field });
}
