// Top-level member splices on JSON bytes (src/formats/shared/json-members.ts): what they produce parses
// to what deleting or assigning the members on the parsed object gives, every other member's bytes are
// kept as written, and bytes that are not one JSON object give null (the caller serialises instead).
import assert from 'node:assert/strict';
import { editMembers, withMembers, withoutMembers } from '../../src/formats/shared/json-members';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const text = (buffer: Buffer | null): string => {
  assert.ok(buffer, 'spliced');
  return buffer.toString('utf8');
};

/** Objects whose strings and nesting try to pass for top-level structure. */
const TRICKY = [
  '{"metadata":{"a":1},"model":"m"}',
  ' {\n\t"model" : "m" ,\r\n "metadata" : { "x" : [ 1 , { "metadata" : 2 } ] } } ',
  '{"input":"a \\"metadata\\": {} } ] [ {","metadata":null}',
  '{"input":"ends in a backslash \\\\","metadata":"v","n":-1.50E+3}',
  '{"text":{"format":{"schema":{"properties":{"metadata":{"type":"object"}}}}},"metadata":{}}',
  '{"meta\\u0064ata":{"escaped":"key"},"k":true}',
  '{"metadata":1,"keep":[],"metadata":2}',
  '{"emoji":"🦊 \\ud83e\\udd8a","metadata":{"ü":"ß"},"last":false}',
  '{"metadata":{}}',
  '{}',
  '{"a":[[[]]],"b":{},"c":""}',
];

describe('JSON member splices', () => {
  describe('withoutMembers', () => {
    for (const input of TRICKY) {
      it(`parses to the object without the members: ${JSON.stringify(input).slice(0, 60)}`, () => {
        const expected = JSON.parse(input) as Record<string, unknown>;
        delete expected['metadata'];
        delete expected['svc'];
        assert.deepEqual(JSON.parse(text(withoutMembers(bytes(input), new Set(['metadata', 'svc'])))), expected);
      });
    }

    it('keeps the other members’ bytes as written (number forms, spacing, escapes)', () => {
      const input = '{ "temperature":2.50E-1, "metadata":{"t":1},"input":[ "a\\/b" , 1.0 ] ,\n"n": 1 }';
      assert.equal(text(withoutMembers(bytes(input), new Set(['metadata']))), '{ "temperature":2.50E-1,"input":[ "a\\/b" , 1.0 ] ,\n"n": 1 }');
    });

    it('removes every copy of a duplicated member (JSON.parse kept only the last)', () => {
      const out = text(withoutMembers(bytes('{"metadata":{"first":1},"model":"m","metadata":{"last":2}}'), new Set(['metadata'])));
      assert.equal(out, '{"model":"m"}');
    });

    it('decodes escaped keys as JSON.parse does', () => {
      assert.equal(text(withoutMembers(bytes('{"meta\\u0064ata":1,"a":2}'), new Set(['metadata']))), '{"a":2}');
    });

    for (const bad of ['[1,2]', '"s"', '{"a":1', '{"a":1}x', '{"a" 1}', '{"a":"open}', '{a:1}', '', '{"a":}']) {
      it(`null for bytes that are not one JSON object: ${JSON.stringify(bad)}`, () => {
        assert.equal(withoutMembers(bytes(bad), new Set(['a'])), null);
      });
    }
  });

  describe('withMembers', () => {
    for (const input of TRICKY) {
      it(`parses to Object.assign of the values: ${JSON.stringify(input).slice(0, 60)}`, () => {
        const values = { metadata: { team: 'bench', n: [1, 'two'] }, store: false };
        const expected = Object.assign(JSON.parse(input) as Record<string, unknown>, values);
        const texts = new Map(Object.entries(values).map(([key, value]) => [key, JSON.stringify(value)]));
        assert.deepEqual(JSON.parse(text(withMembers(bytes(input), texts))), expected);
      });
    }

    it('sets a member in its place, appends an absent one, keeps every other byte', () => {
      const input = '{"id":"resp_1", "metadata" : {},"usage":{"input_tokens":3},"n":1.0}';
      const out = text(
        withMembers(
          bytes(input),
          new Map([
            ['metadata', '{"team":"x"}'],
            ['conversation', '{"id":"conv_1"}'],
          ]),
        ),
      );
      assert.equal(out, '{"id":"resp_1", "metadata" : {"team":"x"},"usage":{"input_tokens":3},"n":1.0,"conversation":{"id":"conv_1"}}');
    });

    it('leaves one copy of a duplicated member it sets', () => {
      const out = text(withMembers(bytes('{"metadata":1,"id":"r","metadata":2}'), new Map([['metadata', '{}']])));
      assert.equal(out, '{"metadata":{},"id":"r"}');
    });

    it('an object untouched is the same bytes; an empty one gets the members', () => {
      const input = bytes('{"a":1}');
      assert.equal(withoutMembers(input, new Set(['b'])), input);
      assert.equal(
        text(
          withMembers(
            bytes(' { } '),
            new Map([
              ['m', '1'],
              ['n', '2'],
            ]),
          ),
        ),
        ' { "m":1,"n":2} ',
      );
      assert.equal(text(withoutMembers(bytes('{"a":1,"b":2}'), new Set(['a', 'b']))), '{}');
    });

    it('null for bytes that are not one JSON object', () => {
      assert.equal(withMembers(bytes('[{"metadata":1}]'), new Map([['metadata', '{}']])), null);
    });
  });

  it('cuts and sets in one pass; a member both cut and set is cut everywhere and appended', () => {
    const input = bytes('{"metadata":{},"model":"alias", "input":"hi","metadata":{"b":1}}');
    assert.equal(text(editMembers(input, { remove: ['metadata'], set: new Map([['model', '"real"']]) })), '{"model":"real", "input":"hi"}');
    assert.equal(text(editMembers(input, { remove: ['model', 'metadata'], set: new Map([['model', '"real"']]) })), '{"input":"hi","model":"real"}');
  });

  it('agrees with JSON.parse on generated objects (strings with quotes, backslashes and braces, nesting)', () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const pieces = ['"', '\\', '{', '}', '[', ']', ',', ':', 'metadata', ' ', 'x', 'é', '\n'];
    const value = (depth: number): unknown => {
      const pick = random();
      if (depth > 2 || pick < 0.3) return Array.from({ length: Math.floor(random() * 6) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
      if (pick < 0.4) return Math.round(random() * 1e6) / 100;
      if (pick < 0.45) return null;
      if (pick < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, (_, i) => [i % 2 ? 'metadata' : String(value(3)), value(depth + 1)]));
    };
    for (let round = 0; round < 500; round += 1) {
      const object = Object.fromEntries(Array.from({ length: 1 + Math.floor(random() * 5) }, () => [random() < 0.3 ? 'metadata' : String(value(3)), value(0)]));
      const input = JSON.stringify(object, null, round % 3 === 0 ? 1 : undefined);
      const without = { ...object };
      delete without['metadata'];
      assert.deepEqual(JSON.parse(text(withoutMembers(bytes(input), new Set(['metadata'])))), without, input);
      assert.deepEqual(JSON.parse(text(withMembers(bytes(input), new Map([['metadata', '{"m":1}']])))), { ...object, metadata: { m: 1 } }, input);
    }
  });
});
