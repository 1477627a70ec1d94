// The generated OpenAPI document as the tests read it, and $ref resolution inside it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { OpenAPIV3_1 } from 'openapi-types';

const ROOT = path.resolve(__dirname, '../..');

/** src/generated/openapi.json, parsed (what the gateway serves). */
export function loadGeneratedDocument(): OpenAPIV3_1.Document {
  return JSON.parse(readFileSync(path.join(ROOT, 'src/generated/openapi.json'), 'utf8')) as OpenAPIV3_1.Document;
}

/** Follows local `$ref`s (`#/components/...`, chained) until `value` is an inline object of `doc`. */
export function derefIn<T>(doc: OpenAPIV3_1.Document, value: unknown): T {
  let current = value as Record<string, unknown>;
  while (typeof current['$ref'] === 'string') {
    const pointer = (current['$ref'] as string).replace(/^#\//, '').split('/');
    current = pointer.reduce<Record<string, unknown>>((node, key) => node[key] as Record<string, unknown>, doc as unknown as Record<string, unknown>);
  }
  return current as T;
}
