// DLP on POST /v1/responses (spec rule 8) over HTTP, native and translated: the input text (a string,
// message content strings, input_text parts), `instructions` and inline text files (an input_file
// whose file_data is a text/plain data: URL) reach the upstream redacted; a file that cannot be
// inspected (binary file_data, a file_id or file_url reference) is a 400 with no error.code and
// nothing sent; an organization without a dlp block sends its file parts unmodified.
import assert from 'node:assert/strict';
import { textEvents, textMessage } from '../fixtures/upstreams/anthropic-events';
import { startFakeAnthropic, type FakeAnthropic } from '../fixtures/upstreams/anthropic-upstream';
import { baseConfigDocument } from '../helpers/config';
import { TEST_KEYS } from '../helpers/gateway';
import { startGatewayWithUpstream, type GatewayWithUpstream } from '../gateway/gateway-helpers';
import { assertNestedError, assertResponsesFraming, jsonReply, parseSseFrames, post, nativeAndClaude } from './http-helpers';

const SECRETS = ['jane.doe@example.com', '4111 1111 1111 1111', 'PRJ-123456'];
const SENSITIVE = 'mail jane.doe@example.com, card 4111 1111 1111 1111, project PRJ-123456';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const unb64 = (data: string): string => Buffer.from(data, 'base64').toString('utf8');
const TEXT_FILE = `data:text/plain;base64,${b64(`notes: ${SENSITIVE}`)}`;
/** A PDF's first bytes: binary, not text the policy could read. */
const PDF_FILE = `data:application/pdf;base64,${Buffer.from([0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x37, 0x0a, 0xe2, 0xe3, 0xcf, 0xd3]).toString('base64')}`;

function assertRedacted(text: string, what: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${what} still holds ${secret}: ${text.slice(0, 400)}`);
  assert.match(text, /\[REDACTED:(email|credit_card|project)\]/, what);
}

/** A request with the sensitive text in every place rule 8 names. */
function sensitiveBody(model: string, stream: boolean): Record<string, unknown> {
  return {
    model,
    stream,
    instructions: `Policy owner: ${SENSITIVE}`,
    input: [
      { role: 'user', content: SENSITIVE },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: SENSITIVE },
          { type: 'input_file', filename: 'notes.txt', file_data: TEXT_FILE },
        ],
      },
    ],
  };
}

describe('POST /v1/responses under a DLP policy (spec rule 8)', function () {
  this.timeout(60_000);
  let env: GatewayWithUpstream;
  let anthropic: FakeAnthropic;

  before(async function () {
    this.timeout(120_000);
    anthropic = await startFakeAnthropic();
    const organizations = (baseConfigDocument()['organizations'] as Record<string, unknown>[]).map((org) =>
      org['id'] === 'acme' ? { ...org, dlp: { enabled: true, custom: [{ name: 'project', pattern: 'PRJ-[0-9]{6}' }] } } : { ...org, models: ['*'] },
    );
    env = await startGatewayWithUpstream({
      ...nativeAndClaude(anthropic.baseUrl),
      plugins: { dlp: { enabled: true } },
      organizations,
    });
  });
  after(async () => {
    await env?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    env.upstream.requests.length = 0;
    anthropic.requests.length = 0;
  });

  const send = (body: unknown, who: 'member' | 'outsider' = 'member'): Promise<Response> =>
    post(`${env.gw.url}/v1/responses`, body, { authorization: `Bearer ${TEST_KEYS[who]}` });

  for (const stream of [false, true]) {
    it(`native: input text, instructions and a text file arrive redacted (${stream ? 'streamed' : 'JSON'})`, async () => {
      const res = await send(sensitiveBody('resp-native', stream));
      assert.equal(res.status, 200);
      if (stream) assertResponsesFraming(parseSseFrames(await res.text()));
      else await res.text();
      assert.equal(env.upstream.requests.length, 1);
      const raw = env.upstream.requests[0]!.raw.toString('utf8');
      assertRedacted(raw, 'upstream body');
      const sent = env.upstream.requests[0]!.json();
      assertRedacted(String(sent['instructions']), 'instructions');
      const input = sent['input'] as Record<string, unknown>[];
      assertRedacted(String(input[0]!['content']), 'message content string');
      const parts = input[1]!['content'] as Record<string, string>[];
      assertRedacted(parts[0]!['text']!, 'input_text');
      const fileData = parts[1]!['file_data']!;
      assert.match(fileData, /^data:text\/plain;base64,/, 'the file stays an inline text file');
      const fileText = unb64(fileData.slice('data:text/plain;base64,'.length));
      assertRedacted(fileText, 'text file');
      assert.ok(fileText.startsWith('notes: '), 'the rest of the file is kept');
    });
  }

  it('native: an input given as one string is redacted', async () => {
    await jsonReply(await send({ model: 'resp-native', input: SENSITIVE }));
    assertRedacted(String(env.upstream.requests[0]!.json()['input']), 'input string');
  });

  for (const stream of [false, true]) {
    it(`translated (Anthropic): the same texts arrive redacted in system, messages and the document (${stream ? 'streamed' : 'JSON'})`, async () => {
      anthropic.script(stream ? { kind: 'sse', events: textEvents('fine') } : { kind: 'json', body: textMessage('fine') });
      const res = await send(sensitiveBody('resp-claude', stream));
      assert.equal(res.status, 200);
      if (stream) assertResponsesFraming(parseSseFrames(await res.text()));
      else await res.text();
      assert.equal(anthropic.requests.length, 1);
      const seen = anthropic.requests[0]!;
      assertRedacted(seen.raw, 'Anthropic body');
      assertRedacted(JSON.stringify(seen.body['system']), 'system');
      const blocks = (seen.body['messages'] as { content: unknown }[]).flatMap((m) =>
        Array.isArray(m.content) ? m.content : [{ type: 'text', text: m.content }],
      ) as Record<string, unknown>[];
      const document = blocks.find((b) => b['type'] === 'document');
      assert.ok(document, `the text file became a document: ${JSON.stringify(blocks)}`);
      const source = document['source'] as Record<string, string>;
      const text = source['type'] === 'base64' ? unb64(source['data']!) : source['data']!;
      assertRedacted(text, 'document text');
    });
  }

  const uninspectable: [string, Record<string, unknown>, string][] = [
    ['binary file_data (a PDF)', { type: 'input_file', filename: 'scan.pdf', file_data: PDF_FILE }, 'input[0].content[1].file_data'],
    ['a file_id', { type: 'input_file', file_id: 'file-abc123' }, 'input[0].content[1].file_id'],
    ['a file_url', { type: 'input_file', file_url: 'https://files.example.com/report.txt' }, 'input[0].content[1].file_url'],
  ];
  for (const [what, part, param] of uninspectable) {
    for (const model of ['resp-native', 'resp-claude']) {
      for (const stream of [false, true]) {
        it(`${what} on ${model === 'resp-native' ? 'native' : 'translated'} (stream: ${stream}): 400, no error.code, nothing sent`, async () => {
          const reply = await jsonReply(
            await send({
              model,
              stream,
              input: [
                {
                  role: 'user',
                  content: [{ type: 'input_text', text: 'summarise this' }, part],
                },
              ],
            }),
          );
          assertNestedError(reply, 400, null, param);
          assert.equal(env.upstream.requests.length, 0, 'nothing went to the native upstream');
          assert.equal(anthropic.requests.length, 0, 'nothing went to Anthropic');
        });
      }
    }
  }

  for (const model of ['resp-native', 'resp-claude']) {
    it(`${model === 'resp-native' ? 'native' : 'translated'}: function_call arguments and function_call_output that name a key twice go as what was inspected`, async () => {
      if (model === 'resp-claude') anthropic.script({ kind: 'json', body: textMessage('fine') });
      // JSON.parse keeps each key's last copy; the model reads the text, first copies included.
      const reply = await jsonReply(
        await send({
          model,
          input: [
            { role: 'user', content: 'mail the report' },
            { type: 'function_call', call_id: 'call_1', name: 'send', arguments: '{"to":"jane.doe@example.com","to":"ops"}' },
            { type: 'function_call_output', call_id: 'call_1', output: '{"card":"4111 1111 1111 1111","card":"none"}' },
          ],
        }),
      );
      assert.equal(reply.status, 200, reply.text);
      const raw = model === 'resp-native' ? env.upstream.requests[0]!.raw.toString('utf8') : anthropic.requests[0]!.raw;
      for (const secret of SECRETS) assert.ok(!raw.includes(secret), `a first copy reached the upstream: ${raw}`);
      assert.ok(raw.includes('ops') && raw.includes('none'), 'the inspected (last) copies are sent');
    });
  }

  it('an organization without a dlp block: file parts of every kind and the text reach a native upstream unmodified', async () => {
    const raw = JSON.stringify({
      model: 'resp-native',
      instructions: SENSITIVE,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: SENSITIVE },
            { type: 'input_file', filename: 'notes.txt', file_data: TEXT_FILE },
            { type: 'input_file', filename: 'scan.pdf', file_data: PDF_FILE },
            { type: 'input_file', file_id: 'file-abc123' },
            { type: 'input_file', file_url: 'https://files.example.com/report.txt' },
          ],
        },
      ],
    });
    const reply = await jsonReply(await send(raw, 'outsider'));
    assert.equal(reply.status, 200, reply.text);
    assert.equal(env.upstream.requests[0]!.raw.toString('utf8'), raw, 'the caller’s bytes');
  });

  it('an organization without a dlp block: a text and a PDF file reach Anthropic unmodified', async () => {
    anthropic.script({ kind: 'json', body: textMessage('fine') });
    const reply = await jsonReply(
      await send(
        {
          model: 'resp-claude',
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_file', filename: 'notes.txt', file_data: TEXT_FILE },
                { type: 'input_file', filename: 'scan.pdf', file_data: PDF_FILE },
              ],
            },
          ],
        },
        'outsider',
      ),
    );
    assert.equal(reply.status, 200, reply.text);
    const blocks = (anthropic.requests[0]!.body['messages'] as { content: Record<string, unknown>[] }[])[0]!.content;
    const sources = blocks.map((b) => b['source'] as Record<string, string>);
    assert.equal(sources[0]!['data'], `notes: ${SENSITIVE}`, 'the text file as it was');
    assert.equal(`data:application/pdf;base64,${sources[1]!['data']}`, PDF_FILE, 'the PDF as it was');
  });
});
