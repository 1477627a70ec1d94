// JSON Schema to the keyword subset Gemini's responseJsonSchema / parametersJsonSchema honour.
import assert from 'node:assert/strict';
import { convertJsonSchemaForGemini, isEmptyObjectSchema } from '../../src/providers/gemini/convert-json-schema-for-gemini';

describe('gemini provider: JSON Schema conversion', () => {
  it('keeps a root $ref beside its $defs (only $ keywords may stand next to a $ref)', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $ref: '#/definitions/Answer',
      title: 'dropped beside $ref',
      definitions: { Answer: { type: 'object', properties: { ok: { type: 'boolean', default: true } }, required: ['ok'] } },
    };
    assert.deepEqual(convertJsonSchemaForGemini(schema), {
      $ref: '#/$defs/Answer',
      $defs: { Answer: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } },
    });
  });

  it('turns draft-7 tuples into prefixItems, const into enum, and unwraps a single allOf', () => {
    const schema = {
      type: 'object',
      properties: {
        point: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], minItems: 2, maxItems: 2 },
        kind: { type: 'string', const: 'circle' },
        shape: { allOf: [{ $ref: '#/$defs/Shape' }], description: 'a shape' },
        tags: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
        choice: { oneOf: [{ type: 'string' }, { type: 'null' }] },
      },
      $defs: { Shape: { type: 'object', additionalProperties: { type: 'number', exclusiveMinimum: 0 } } },
    };
    assert.deepEqual(convertJsonSchemaForGemini(schema), {
      type: 'object',
      properties: {
        point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], minItems: 2, maxItems: 2 },
        kind: { type: 'string', enum: ['circle'] },
        shape: { anyOf: [{ $ref: '#/$defs/Shape' }], description: 'a shape' },
        tags: { type: 'array', items: { type: 'string' } },
        choice: { oneOf: [{ type: 'string' }, { type: 'null' }] },
      },
      $defs: { Shape: { type: 'object', additionalProperties: { type: 'number' } } },
    });
  });

  it('does not modify its input', () => {
    const schema = { type: 'object', properties: { a: { const: 1, pattern: 'x' } }, definitions: { B: { type: 'string' } } };
    const copy = structuredClone(schema);
    convertJsonSchemaForGemini(schema);
    assert.deepEqual(schema, copy);
  });

  it('recognises an empty object schema (left out of a function declaration)', () => {
    assert.equal(isEmptyObjectSchema({ type: 'object', properties: {} }), true);
    assert.equal(isEmptyObjectSchema({ type: 'object' }), true);
    assert.equal(isEmptyObjectSchema({ type: 'object', properties: { a: { type: 'string' } } }), false);
    assert.equal(isEmptyObjectSchema({ type: 'object', additionalProperties: { type: 'string' } }), false);
  });
});
