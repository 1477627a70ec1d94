import assert from 'node:assert/strict';
import { compilePolicy } from '../../../plugins/dlp/redactor';
import type { Redactor } from '../../../src/pipeline/context';
import { isGatewayError } from '../../../src/http/errors';
import { redactResponsesRequest } from '../../../src/formats/responses';
import { hasDuplicateKeys, redactData } from '../../../src/formats/dlp/redact-values';

const EMAIL = 'jane.doe@example.com';
const CARD = '4111 1111 1111 1111';
const PROJECT = 'PRJ-123456';
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const unb64 = (data: string): string => Buffer.from(data, 'base64').toString('utf8');

/** The organization policy as the dlp plugin compiles it, counting replacements as its counting redactor does. */
function countingPolicy(): { redactor: Redactor; counts: Record<string, number> } {
  const policy = compilePolicy({ enabled: true, detectors: ['email', 'credit_card'], custom: [{ name: 'project', pattern: 'PRJ-[0-9]{6}' }] });
  assert.ok(policy);
  const counts: Record<string, number> = {};
  return {
    counts,
    redactor: {
      redact(text) {
        const result = policy.redact(text);
        for (const name in result.detectors) counts[name] = (counts[name] ?? 0) + (result.detectors[name] ?? 0);
        return result;
      },
    },
  };
}

/** Redacts a shallow copy of `body`, as the handlers do; the copy and the counts. */
function redacted(body: Record<string, unknown>): { copy: Record<string, unknown>; counts: Record<string, number> } {
  const { redactor, counts } = countingPolicy();
  const copy = { ...body };
  redactResponsesRequest(copy, redactor);
  return { copy, counts };
}

function refusal(body: Record<string, unknown>): { status: number; code: string; wireCode: string | null; param: string | undefined } {
  try {
    redacted(body);
  } catch (err) {
    assert.ok(isGatewayError(err), String(err));
    return { status: err.status, code: err.code, wireCode: err.wireCode, param: err.param };
  }
  assert.fail(`expected ${JSON.stringify(body).slice(0, 200)} to be refused`);
}

describe('formats/responses: redactResponsesRequest (spec rule 8)', () => {
  it('redacts every text the model reads and counts each replacement', () => {
    const schema = { type: 'object', description: `Ask ${EMAIL}`, properties: { card: { type: 'string', enum: [CARD] } } };
    const body: Record<string, unknown> = {
      model: 'm',
      instructions: `Escalate to ${EMAIL}`,
      input: [
        { role: 'system', content: `Project ${PROJECT}` },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: `My card is ${CARD}` }] },
        {
          type: 'message',
          role: 'assistant',
          content: [
            { type: 'output_text', text: `Noted ${PROJECT}`, annotations: [] },
            { type: 'refusal', refusal: `No ${EMAIL}` },
          ],
        },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: JSON.stringify({ email: EMAIL }) },
        { type: 'function_call_output', call_id: 'call_1', output: JSON.stringify({ owner: EMAIL }) },
        { type: 'function_call_output', call_id: 'call_2', output: `plain ${PROJECT}` },
        { type: 'function_call_output', call_id: 'call_3', output: [{ type: 'input_text', text: `part ${EMAIL}` }] },
        { type: 'custom_tool_call_output', call_id: 'call_4', output: `custom ${PROJECT}` },
      ],
      tools: [{ type: 'function', name: 'lookup', description: `Finds ${PROJECT}`, parameters: schema }],
      text: { format: { type: 'json_schema', name: 'out', description: `For ${EMAIL}`, schema } },
      prompt: { id: 'pmpt_1', variables: { who: EMAIL, note: { type: 'input_text', text: `re ${PROJECT}` } } },
      stop: [`${PROJECT}`],
      user: EMAIL,
      safety_identifier: EMAIL,
    };
    const before = structuredClone(body);
    const { copy, counts } = redacted(body);
    assert.deepEqual(body, before, "the caller's body is never changed");

    assert.equal(copy['instructions'], 'Escalate to [REDACTED:email]');
    const input = copy['input'] as Record<string, unknown>[];
    assert.equal(input[0]?.['content'], 'Project [REDACTED:project]');
    assert.deepEqual(input[1]?.['content'], [{ type: 'input_text', text: 'My card is [REDACTED:credit_card]' }]);
    assert.deepEqual(input[2]?.['content'], [
      { type: 'output_text', text: 'Noted [REDACTED:project]', annotations: [] },
      { type: 'refusal', refusal: 'No [REDACTED:email]' },
    ]);
    assert.deepEqual(JSON.parse(input[3]?.['arguments'] as string), { email: '[REDACTED:email]' }, 'arguments stay JSON');
    assert.deepEqual(input[3]?.['name'], 'lookup');
    assert.deepEqual(JSON.parse(input[4]?.['output'] as string), { owner: '[REDACTED:email]' });
    assert.equal(input[5]?.['output'], 'plain [REDACTED:project]');
    assert.deepEqual(input[6]?.['output'], [{ type: 'input_text', text: 'part [REDACTED:email]' }]);
    assert.deepEqual(input[7], { type: 'custom_tool_call_output', call_id: 'call_4', output: 'custom [REDACTED:project]' });
    const [tool] = copy['tools'] as Record<string, unknown>[];
    assert.equal(tool?.['description'], 'Finds [REDACTED:project]');
    assert.equal(tool?.['name'], 'lookup');
    const redactedSchema = { type: 'object', description: 'Ask [REDACTED:email]', properties: { card: { type: 'string', enum: ['[REDACTED:credit_card]'] } } };
    assert.deepEqual(tool?.['parameters'], redactedSchema);
    assert.deepEqual(copy['text'], { format: { type: 'json_schema', name: 'out', description: 'For [REDACTED:email]', schema: redactedSchema } });
    assert.deepEqual(copy['prompt'], { id: 'pmpt_1', variables: { who: '[REDACTED:email]', note: { type: 'input_text', text: 're [REDACTED:project]' } } });
    assert.deepEqual(copy['stop'], ['[REDACTED:project]']);
    assert.equal(copy['user'], '[REDACTED:email]');
    assert.equal(copy['safety_identifier'], '[REDACTED:email]');
    assert.ok(!JSON.stringify(copy).includes(EMAIL) && !JSON.stringify(copy).includes(CARD) && !JSON.stringify(copy).includes(PROJECT));
    assert.deepEqual(counts, { email: 11, credit_card: 3, project: 7 });
  });

  it('redacts a string input', () => {
    const { copy, counts } = redacted({ model: 'm', input: `mail ${EMAIL}` });
    assert.equal(copy['input'], 'mail [REDACTED:email]');
    assert.deepEqual(counts, { email: 1 });
  });

  it('decodes, redacts and re-encodes inline text files (data: URL or bare base64 named by its extension)', () => {
    const { copy } = redacted({
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_file', filename: 'notes.txt', file_data: `data:text/plain;base64,${b64(`call ${EMAIL}`)}` },
            { type: 'input_file', filename: 'cards.csv', file_data: b64(`name,card\njane,${CARD}\n`) },
            { type: 'input_file', filename: 'clean.json', file_data: `data:application/json;base64,${b64('{"a":1}')}` },
          ],
        },
      ],
    });
    const [first, second, third] = (copy['input'] as { content: Record<string, string>[] }[])[0]!.content;
    const firstData = first?.['file_data'] ?? '';
    assert.ok(firstData.startsWith('data:text/plain;base64,'), firstData);
    assert.equal(unb64(firstData.slice('data:text/plain;base64,'.length)), 'call [REDACTED:email]');
    assert.equal(unb64(second?.['file_data'] ?? ''), 'name,card\njane,[REDACTED:credit_card]\n');
    assert.equal(third?.['file_data'], `data:application/json;base64,${b64('{"a":1}')}`, 'a file with nothing to redact keeps its bytes');
  });

  it('refuses what it cannot inspect (binary file_data, file_id, file_url) with a 400 naming the field and no error code', () => {
    const pdf = `data:application/pdf;base64,${b64('%PDF-1.4')}`;
    const cases: [Record<string, unknown>, string][] = [
      [
        {
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_text', text: 'x' },
                { type: 'input_file', file_data: pdf },
              ],
            },
          ],
        },
        'input[0].content[1].file_data',
      ],
      [{ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] }, 'input[0].content[0].file_id'],
      [{ input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.txt' }] }] }, 'input[0].content[0].file_url'],
      [{ input: [{ role: 'user', content: [{ type: 'input_file', filename: 'x.bin', file_data: b64('\u0000\u0001') }] }] }, 'input[0].content[0].file_data'],
      [
        {
          input: [
            { role: 'user', content: 'x' },
            { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_id: 'file-2' }] },
          ],
        },
        'input[1].output[0].file_id',
      ],
      [{ input: 'x', prompt: { id: 'p', variables: { doc: { type: 'input_file', file_url: 'https://example.com/d.pdf' } } } }, 'prompt.variables.doc.file_url'],
    ];
    for (const [body, param] of cases) {
      const error = refusal({ model: 'm', ...body });
      assert.deepEqual(error, { status: 400, code: 'uninspectable_file', wireCode: null, param }, JSON.stringify(body));
    }
  });

  it('passes images, reasoning items, item references, ids, tool names, metadata and opaque state as they are', () => {
    const image = `data:image/png;base64,${b64('png bytes')}`;
    const body: Record<string, unknown> = {
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_image', image_url: image, detail: 'high' },
            { type: 'input_image', file_id: 'file-img' },
            { type: 'input_image', image_url: 'https://example.com/a.png' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: `thought about ${EMAIL}` }], encrypted_content: 'agw-reasoning-v1:abc' },
        { type: 'item_reference', id: 'msg_1' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: `who is ${EMAIL}` } },
      ],
      tools: [{ type: 'mcp', server_label: 'wiki', server_url: 'https://mcp.example.com', headers: { authorization: `Bearer ${PROJECT}` } }],
      metadata: { owner: EMAIL },
      prompt_cache_key: PROJECT,
    };
    const { copy } = redacted(body);
    const input = copy['input'] as Record<string, unknown>[];
    assert.deepEqual(input.slice(0, 3), (body['input'] as unknown[]).slice(0, 3));
    assert.deepEqual(input[3], { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'who is [REDACTED:email]' } });
    assert.deepEqual(copy['tools'], body['tools'], 'an MCP server definition (its URL and credentials) is not prompt text');
    assert.deepEqual(copy['metadata'], { owner: EMAIL }, 'metadata is never forwarded');
    assert.equal(copy['prompt_cache_key'], PROJECT);
  });

  it('tells JSON text naming a key twice in any object (escapes decoded) from JSON that does not', () => {
    for (const text of ['{"a":1,"a":2}', '{"a":1,"\\u0061":2}', '[{"x":{"a":"}","b":[1,{"c":1}],"a":0}}]', '{"a":{"b":1},"c":{"b":2},"a":3}']) {
      assert.equal(hasDuplicateKeys(text), true, text);
    }
    for (const text of ['{"a":1,"b":"a"}', '{"a":{"a":{"a":1}}}', '[{"a":1},{"a":2}]', '{"a":"\\"a\\":1","b":["a","a"]}', '{}', '"a"', '[]']) {
      assert.equal(hasDuplicateKeys(text), false, text);
    }
  });

  it('inspects text in other shapes and fields: annotations, file names (extension kept), prompt variables given as parts', () => {
    const { copy } = redacted({
      model: 'm',
      input: [
        {
          role: 'assistant',
          content: [{ type: 'output_text', text: 'see', annotations: [{ type: 'url_citation', url: 'https://example.com', title: EMAIL }] }],
        },
        { role: 'user', content: [{ type: 'input_file', filename: `${PROJECT}.txt`, file_data: `data:text/plain;base64,${b64('hello')}` }] },
      ],
      prompt: { id: 'pmpt_1', variables: { who: { type: 'input_text', text: [EMAIL] }, card: [CARD] } },
    });
    const text = JSON.stringify(copy);
    for (const secret of [EMAIL, CARD, PROJECT]) assert.ok(!text.includes(secret), text);
    const file = ((copy['input'] as Record<string, unknown>[])[1]!['content'] as Record<string, string>[])[0]!;
    assert.equal(file['filename'], '[REDACTED:project].txt');
  });

  it('redactData redacts keys as data: a collision gets a numbered suffix, __proto__ stays an own key', () => {
    const { redactor } = countingPolicy();
    const value = JSON.parse(`{"${EMAIL}":1,"ops@example.com":2,"__proto__":{"${PROJECT}":"${CARD}"},"plain":"${EMAIL}"}`) as unknown;
    const out = redactData(value, redactor) as Record<string, unknown>;
    assert.equal(
      JSON.stringify(out),
      '{"[REDACTED:email]":1,"[REDACTED:email] (2)":2,"__proto__":{"[REDACTED:project]":"[REDACTED:credit_card]"},"plain":"[REDACTED:email]"}',
    );
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
  });
});
