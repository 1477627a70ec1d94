// DLP through HTTP on every inbound format (chat completions, legacy completions, Anthropic messages;
// streamed and not; pass-through and translated): fake upstreams record what they received, and every
// text-bearing field must arrive redacted; content that cannot be inspected is refused in the path
// family's envelope with nothing sent; an organization without a dlp block passes its text unchanged.
import assert from 'node:assert/strict';
import { textMessage, textThenToolEvents } from '../fixtures/upstreams/anthropic-events';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic, type RecordedRequest } from '../fixtures/upstreams/anthropic-upstream';
import type { AuditRecord } from '../../src/store/types';
import { baseConfigDocument } from '../helpers/config';
import { TEST_KEYS } from '../helpers/gateway';
import { postRaw, startGatewayWithUpstream, type GatewayWithUpstream } from './gateway-helpers';

const SECRETS = ['jane.doe@example.com', '4111 1111 1111 1111', 'AKIAIOSFODNN7EXAMPLE', 'PRJ-123456'];
const SENSITIVE = 'mail jane.doe@example.com, card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE, project PRJ-123456';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const unb64 = (data: string): string => Buffer.from(data, 'base64').toString('utf8');
const utf16 = (text: string): string => Buffer.from(text, 'utf16le').toString('base64');

/** No secret anywhere in `text`, and redaction markers in their place. */
/** A chat conversation in which the assistant called `name` with `args` and the tool answered. */
function toolCallConversation(name: string, args: string): Record<string, unknown>[] {
  return [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: args } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'sent' },
  ];
}

/** The arguments of that call as the upstream received them. */
function sentArguments(body: Record<string, unknown>): string {
  return (body['messages'] as { tool_calls?: { function: { arguments: string } }[] }[])[1]!.tool_calls![0]!.function.arguments;
}

function assertRedacted(text: string, what: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${what} still holds ${secret}: ${text.slice(0, 400)}`);
  assert.match(text, /\[REDACTED:(email|credit_card|secret_key|project)\]/, what);
}

describe('gateway: DLP on every inbound format', function () {
  let env: GatewayWithUpstream;
  let anthropic: FakeAnthropic;

  before(async function () {
    this.timeout(120_000); // the embedded store's first start is slow on a busy machine
    anthropic = await startFakeAnthropic();
    const organizations = (baseConfigDocument()['organizations'] as Record<string, unknown>[]).map(
      (org) => (org['id'] === 'acme' ? { ...org, dlp: { enabled: true, custom: [{ name: 'project', pattern: 'PRJ-[0-9]{6}' }] } } : { ...org, models: ['*'] }), // `other` has no dlp block: no policy
    );
    env = await startGatewayWithUpstream({
      providers: {
        claude: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: FAKE_ANTHROPIC_KEY, retries: { max: 0 } },
      },
      models: [{ id: 'claude-direct', provider: 'claude', upstream: 'claude-sonnet-4-20250514' }],
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

  const post = (path: string, body: unknown, key: 'member' | 'outsider' = 'member'): Promise<Response> =>
    postRaw(env.gw, path, typeof body === 'string' ? body : JSON.stringify(body), key === 'outsider' ? { authorization: `Bearer ${TEST_KEYS.outsider}` } : {});

  /** Posts `body` to a model the fake Anthropic upstream serves; the one request that upstream received. */
  const sentToAnthropic = async (path: string, body: unknown, stream: boolean): Promise<RecordedRequest> => {
    anthropic.script(stream ? { kind: 'sse', events: textThenToolEvents() } : { kind: 'json', body: textMessage('fine') });
    const res = await post(path, body);
    assert.equal(res.status, 200);
    await res.text();
    assert.equal(anthropic.requests.length, 1, 'one upstream request');
    return anthropic.requests[0]!;
  };

  /** The one request the OpenAI-format upstream received. */
  const sentUpstream = (): { raw: string; json: Record<string, unknown> } => {
    assert.equal(env.upstream.requests.length, 1, 'one upstream request');
    const seen = env.upstream.requests[0]!;
    return { raw: seen.raw.toString('utf8'), json: seen.json() };
  };

  describe('chat completions', () => {
    const chatBody = (stream: boolean): Record<string, unknown> => ({
      model: 'gpt-test',
      stream,
      messages: [
        { role: 'system', content: SENSITIVE },
        {
          role: 'user',
          content: [
            { type: 'text', text: SENSITIVE },
            { type: 'input_text', text: SENSITIVE },
            { type: 'file', file: { filename: 'notes.txt', file_data: `data:text/plain;base64,${b64(SENSITIVE)}` } },
            { type: 'file', file: { filename: 'data.csv', file_data: b64(`name,mail\njane,${SENSITIVE}`) } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'send', arguments: JSON.stringify({ to: 'jane.doe@example.com', note: SENSITIVE }) } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: SENSITIVE },
        { role: 'assistant', content: [{ type: 'refusal', refusal: SENSITIVE }] },
      ],
      prediction: { type: 'content', content: SENSITIVE },
    });

    for (const stream of [false, true]) {
      it(`redacts every text-bearing field before forwarding (${stream ? 'streamed' : 'JSON'}), files decoded and re-encoded, images untouched`, async () => {
        const res = await post('/v1/chat/completions', chatBody(stream));
        assert.equal(res.status, 200);
        const reply = await res.text();
        assert.match(reply, stream ? /Hello[\s\S]*world[\s\S]*\[DONE\]/ : /Hello from upstream/, 'the reply is relayed as it came');
        const { raw, json } = sentUpstream();
        assertRedacted(raw, 'upstream body');
        const messages = json['messages'] as Record<string, unknown>[];
        const parts = messages[1]!['content'] as Record<string, Record<string, string>>[];
        const textFile = parts[2]!['file']!;
        assert.match(textFile['file_data']!, /^data:text\/plain;base64,/);
        assertRedacted(unb64(textFile['file_data']!.slice('data:text/plain;base64,'.length)), 'text file');
        assertRedacted(unb64(parts[3]!['file']!['file_data']!), 'CSV file');
        assert.deepEqual(parts[4], { type: 'image_url', image_url: { url: 'https://example.com/a.png' } });
        const args = JSON.parse((messages[2]!['tool_calls'] as { function: { arguments: string } }[])[0]!.function.arguments) as Record<string, string>;
        assert.equal(args['to'], '[REDACTED:email]', 'arguments stay JSON');
        assertRedacted(args['note']!, 'tool-call arguments');
        assert.equal(json['stream'], stream);
      });
    }

    for (const [name, part, param] of [
      [
        'binary file_data',
        { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${b64('%PDF-1.7 binary')}` } },
        'messages[0].content[0].file.file_data',
      ],
      ['a file_id', { type: 'file', file: { file_id: 'file-abc123' } }, 'messages[0].content[0].file.file_id'],
      ['a file_url', { type: 'input_file', file_url: 'https://example.com/report.pdf' }, 'messages[0].content[0].file_url'],
      [
        'file bytes that are not UTF-8',
        { type: 'file', file: { filename: 'a.txt', file_data: Buffer.from([0xff, 0xfe, 0x00, 0x81]).toString('base64') } },
        'messages[0].content[0].file.file_data',
      ],
      [
        'a text file in another charset than UTF-8',
        { type: 'file', file: { filename: 'a.txt', file_data: `data:text/plain;charset=utf-16le;base64,${utf16(SENSITIVE)}` } },
        'messages[0].content[0].file.file_data',
      ],
      [
        'UTF-16 text with no charset (it decodes as UTF-8 with a NUL after each ASCII character)',
        { type: 'input_file', filename: 'a.txt', file_data: utf16(SENSITIVE) },
        'messages[0].content[0].file_data',
      ],
    ] as const) {
      it(`refuses ${name} under a policy with a 400 in the OpenAI envelope saying why, sending nothing`, async () => {
        const res = await post('/v1/chat/completions', { model: 'gpt-test', messages: [{ role: 'user', content: [part] }] });
        assert.equal(res.status, 400);
        const body = (await res.json()) as { error: { type: string; param: string; message: string } };
        assert.equal(body.error.type, 'invalid_request_error');
        assert.equal(body.error.param, param);
        assert.match(body.error.message, /cannot be inspected.*DLP policy/);
        assert.equal(env.upstream.requests.length, 0);
      });
    }

    it("records in the call's audit record which detectors fired and how often, never the matched text", async () => {
      const res = await postRaw(
        env.gw,
        '/v1/chat/completions',
        JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: `${SENSITIVE}; cc ops@example.com` }] }),
        { 'x-request-id': 'dlp-audit-1' },
      );
      assert.equal(res.status, 200);
      const deadline = Date.now() + 30_000;
      let record: AuditRecord | undefined;
      while (!record) {
        const records = await env.gw.store.audit.list({ orgId: 'acme', since: null, limit: 1000, after: null });
        record = records.find((r) => r.requestId === 'dlp-audit-1');
        if (!record) {
          assert.ok(Date.now() < deadline, 'the audit record was not written within 30 s');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      assert.deepEqual(record.redactions, { email: 2, credit_card: 1, secret_key: 1, project: 1 });
      for (const secret of SECRETS) assert.ok(!JSON.stringify(record).includes(secret));
    });

    it('forwards a body with a duplicated key only as the re-serialisation of what was inspected', async () => {
      const raw = `{"model":"gpt-test","messages":[{"role":"user","content":"${SENSITIVE}"}],"messages":[{"role":"user","content":"hello"}]}`;
      const res = await post('/v1/chat/completions', raw);
      assert.equal(res.status, 200);
      const sent = sentUpstream();
      assert.ok(!sent.raw.includes('jane.doe'), `the first copy of "messages" reached the upstream: ${sent.raw}`);
      assert.deepEqual(sent.json['messages'], [{ role: 'user', content: 'hello' }]);
    });

    it('inspects text the caller sent in another shape or field than the usual one: file names, annotations, arrays and objects', async () => {
      const res = await post('/v1/chat/completions', {
        model: 'gpt-test',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: [SENSITIVE] },
              { text: { note: SENSITIVE } },
              { type: 'file', file: { filename: 'jane.doe@example.com.txt', file_data: `data:text/plain;base64,${b64('hello')}` } },
            ],
          },
          {
            role: 'assistant',
            refusal: [SENSITIVE],
            content: [
              { type: 'output_text', text: 'see', annotations: [{ type: 'url_citation', url: 'https://example.com', title: SENSITIVE }] },
              { type: 'refusal', refusal: { why: SENSITIVE } },
            ],
          },
          { role: 'user', content: 'go on' },
        ],
        prediction: { type: 'content', content: { text: SENSITIVE } },
      });
      assert.equal(res.status, 200);
      await res.text();
      const { raw, json } = sentUpstream();
      assertRedacted(raw, 'upstream body');
      const parts = (json['messages'] as { content: Record<string, unknown>[] }[])[0]!.content;
      assert.deepEqual(parts[2], { type: 'file', file: { filename: '[REDACTED:email].txt', file_data: `data:text/plain;base64,${b64('hello')}` } });
    });

    it('forwards a text file as the bytes it inspected: nothing past a padding "=" the decoder stopped at', async () => {
      // A base64 decoder stops at the first padding: the policy saw "hi", the rest was never decoded.
      const smuggled = `${b64('hi')}${b64(SENSITIVE)}`;
      const res = await post('/v1/chat/completions', {
        model: 'gpt-test',
        messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'notes.txt', file_data: `data:text/plain;base64,${smuggled}` } }] }],
      });
      assert.equal(res.status, 200);
      await res.text();
      const parts = (sentUpstream().json['messages'] as { content: { file: Record<string, string> }[] }[])[0]!.content;
      assert.equal(parts[0]!.file['file_data'], `data:text/plain;base64,${b64('hi')}`);
    });

    it('redacts object keys in tool-call arguments (data, such as a map keyed by e-mail address), losing no entry', async () => {
      const args = JSON.stringify({ attendees: { 'jane.doe@example.com': 'accepted', 'ops@example.com': 'declined' }, note: 'weekly' });
      const res = await post('/v1/chat/completions', {
        model: 'gpt-test',
        messages: toolCallConversation('invite', args),
      });
      assert.equal(res.status, 200);
      await res.text();
      const { raw, json } = sentUpstream();
      assert.ok(!raw.includes('jane.doe') && !raw.includes('ops@example.com'), raw);
      const sent = sentArguments(json);
      assert.deepEqual(JSON.parse(sent), { attendees: { '[REDACTED:email]': 'accepted', '[REDACTED:email] (2)': 'declined' }, note: 'weekly' });
    });

    it('forwards tool-call arguments that name a key twice only as the re-serialisation of what was inspected', async () => {
      // JSON.parse keeps the last "to"; the model reads the text, first copy included.
      const args = '{"to":"jane.doe@example.com","to":"ops","note":"hi","\\u006eote":"there"}';
      const res = await post('/v1/chat/completions', {
        model: 'gpt-test',
        messages: toolCallConversation('send', args),
      });
      assert.equal(res.status, 200);
      await res.text();
      const { raw, json } = sentUpstream();
      assert.ok(!raw.includes('jane.doe'), `the first copy of "to" reached the upstream: ${raw}`);
      const sent = sentArguments(json);
      assert.equal(sent, '{"to":"ops","note":"there"}');
    });

    it('inspects tool-call arguments nested thousands of levels deep as text: redacted, not a 500', async () => {
      const levels = 5000;
      const args = `{"to":"jane.doe@example.com","deep":${'['.repeat(levels)}${']'.repeat(levels)}}`;
      const call = (model: string): Record<string, unknown> => ({
        model,
        max_tokens: 5,
        messages: toolCallConversation('send', args),
      });
      const res = await post('/v1/chat/completions', call('gpt-test'));
      assert.equal(res.status, 200, await res.clone().text());
      await res.text();
      assert.equal(sentArguments(sentUpstream().json), args.replace('jane.doe@example.com', '[REDACTED:email]'));
      // A translated model needs the arguments as an object: too deep to be one, they are a 400.
      const translated = await post('/v1/chat/completions', call('claude-direct'));
      assert.equal(translated.status, 400);
      assert.equal(((await translated.json()) as { error: { param: string } }).error.param, 'messages[1].content[0].arguments');
      assert.equal(anthropic.requests.length, 0);
    });

    it('leaves the text and the bytes of an organization without a dlp block unchanged, files and file ids included', async () => {
      const raw = JSON.stringify({
        model: 'gpt-test',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: SENSITIVE },
              { type: 'file', file: { file_id: 'file-abc123' } },
            ],
          },
        ],
      });
      const res = await post('/v1/chat/completions', raw, 'outsider');
      assert.equal(res.status, 200);
      assert.equal(sentUpstream().raw, raw);
    });
  });

  describe('legacy completions', () => {
    for (const stream of [false, true]) {
      it(`redacts prompt (string and array) and suffix (${stream ? 'streamed' : 'JSON'})`, async () => {
        for (const prompt of [SENSITIVE, [SENSITIVE, 'second']]) {
          env.upstream.requests.length = 0;
          const res = await post('/v1/completions', { model: 'gpt-test', prompt, suffix: SENSITIVE, stream, max_tokens: 3 });
          assert.equal(res.status, 200);
          await res.text();
          const { raw, json } = sentUpstream();
          assertRedacted(raw, 'upstream body');
          assertRedacted(json['suffix'] as string, 'suffix');
        }
      });
    }
  });

  it('legacy completions: redacts strings nested in a prompt array, leaving token arrays as they are', async () => {
    const res = await post('/v1/completions', { model: 'gpt-test', prompt: [[SENSITIVE], [1, 2, 3]], max_tokens: 3 });
    assert.equal(res.status, 200);
    await res.text();
    const { raw, json } = sentUpstream();
    assertRedacted(raw, 'upstream body');
    assert.deepEqual((json['prompt'] as unknown[])[1], [1, 2, 3]);
  });

  describe('Anthropic messages', () => {
    const messagesBody = (model: string, stream: boolean): Record<string, unknown> => ({
      model,
      max_tokens: 50,
      stream,
      system: [{ type: 'text', text: SENSITIVE }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: SENSITIVE },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: SENSITIVE }, title: 'notes' },
            { type: 'document', source: { type: 'base64', media_type: 'text/plain', data: b64(SENSITIVE) } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'send', input: { to: 'jane.doe@example.com', cc: { 'jane.doe@example.com': 'ops' }, note: SENSITIVE } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: SENSITIVE },
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: SENSITIVE }] },
          ],
        },
      ],
    });

    for (const stream of [false, true]) {
      it(`redacts system, text, documents, tool_use input and tool_result content on a translated model (${stream ? 'streamed' : 'JSON'})`, async () => {
        const res = await post('/v1/messages', messagesBody('gpt-test', stream));
        assert.equal(res.status, 200);
        assert.match(await res.text(), /Hello/);
        assertRedacted(sentUpstream().raw, 'translated upstream body');
      });

      it(`redacts the same fields on a pass-through (anthropic) model (${stream ? 'streamed' : 'JSON'})`, async () => {
        const seen = await sentToAnthropic('/v1/messages', messagesBody('claude-direct', stream), stream);
        assertRedacted(seen.raw, 'pass-through upstream body');
        const messages = seen.body['messages'] as { content: Record<string, Record<string, string>>[] }[];
        assertRedacted(unb64(messages[0]!.content[2]!['source']!['data']!), 'base64 text document');
        const input = messages[1]!.content[0]!['input']!;
        assert.equal(input['to'], '[REDACTED:email]');
        assert.deepEqual(input['cc'], { '[REDACTED:email]': 'ops' }, 'keys of the input are data too');
        assertRedacted(input['note']!, 'tool_use input');
      });
    }

    it('inspects text the caller sent in another shape or field than the usual one: citations, objects and arrays (pass-through)', async () => {
      const seen = await sentToAnthropic(
        '/v1/messages',
        {
          model: 'claude-direct',
          max_tokens: 50,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'document', source: { type: 'text', media_type: 'text/plain', data: [SENSITIVE] }, title: [SENSITIVE], context: { note: SENSITIVE } },
                { type: 'search_result', source: [SENSITIVE], title: { t: SENSITIVE }, content: [{ type: 'text', text: 'result' }] },
              ],
            },
            {
              role: 'assistant',
              content: [
                {
                  type: 'text',
                  text: 'as the notes say',
                  citations: [{ type: 'char_location', cited_text: SENSITIVE, document_index: 0, start_char_index: 0, end_char_index: 5 }],
                },
                { type: 'tool_use', id: 'toolu_1', name: 'send', input: {} },
              ],
            },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: { type: 'text', text: SENSITIVE } }] },
          ],
        },
        false,
      );
      assertRedacted(seen.raw, 'pass-through upstream body');
    });

    it('refuses a container_upload (a file the upstream loads by file_id) under a policy with a 400, sending nothing', async () => {
      const res = await post('/v1/messages', {
        model: 'claude-direct',
        max_tokens: 10,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'analyse the upload' },
              { type: 'container_upload', file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' },
            ],
          },
        ],
      });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { type: string; error: { type: string; message: string } };
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /container_upload.*cannot be inspected.*DLP policy/);
      assert.equal(anthropic.requests.length, 0);
    });

    it('refuses a document whose source is not an object (nothing to inspect it by) with a 400', async () => {
      const res = await post('/v1/messages', {
        model: 'claude-direct',
        max_tokens: 10,
        messages: [{ role: 'user', content: [{ type: 'document', source: SENSITIVE }] }],
      });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { error: { message: string } }).error.message, /cannot be inspected/);
      assert.equal(anthropic.requests.length, 0);
    });

    for (const [name, source] of [
      ['a binary base64 document', { type: 'base64', media_type: 'application/pdf', data: b64('%PDF-1.7') }],
      ['a URL document', { type: 'url', url: 'https://example.com/report.pdf' }],
      ['a file document', { type: 'file', file_id: 'file_011' }],
      ['a UTF-16 text document', { type: 'base64', media_type: 'text/plain', data: utf16(SENSITIVE) }],
    ] as const) {
      it(`refuses ${name} under a policy with a 400 in the Anthropic envelope, sending nothing`, async () => {
        const res = await post('/v1/messages', {
          model: 'claude-direct',
          max_tokens: 10,
          messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'document', source }] }] }],
        });
        assert.equal(res.status, 400);
        const body = (await res.json()) as { type: string; error: { type: string; message: string } };
        assert.equal(body.type, 'error');
        assert.equal(body.error.type, 'invalid_request_error');
        assert.match(body.error.message, /cannot be inspected.*DLP policy/);
        assert.equal(anthropic.requests.length, 0);
      });
    }
  });

  describe('tool definitions, author names, stop sequences and end-user ids', () => {
    /** A parameter schema with secrets in every text-bearing place, and structure that must survive. */
    const schema = (): Record<string, unknown> => ({
      type: 'object',
      description: SENSITIVE,
      properties: {
        to: { type: 'string', title: SENSITIVE, description: SENSITIVE, enum: ['jane.doe@example.com', 'ops'], default: 'jane.doe@example.com' },
        project: { type: 'string', pattern: '^PRJ-[0-9]{6}$', const: 'PRJ-123456', examples: ['PRJ-123456'] },
        items: { type: 'array', items: { anyOf: [{ type: 'string', description: SENSITIVE }, { $ref: '#/$defs/note' }] } },
      },
      $defs: { note: { type: 'object', properties: { body: { type: 'string', description: SENSITIVE } }, required: ['body'] } },
      required: ['to', 'project'],
      additionalProperties: false,
    });

    /** The schema as it must arrive: text redacted, keywords, property names and patterns as written. */
    function assertSchemaRedacted(sent: unknown, what: string): void {
      const got = sent as Record<string, Record<string, Record<string, unknown>>>;
      assertRedacted(JSON.stringify(got), what);
      assert.deepEqual(Object.keys(got['properties']!), ['to', 'project', 'items'], `${what}: property names kept`);
      assert.deepEqual(got['required'], ['to', 'project'], `${what}: required kept`);
      assert.equal(got['additionalProperties'], false);
      assert.equal(got['properties']!['project']!['pattern'], '^PRJ-[0-9]{6}$', `${what}: pattern kept`);
      assert.deepEqual(got['properties']!['to']!['enum'], ['[REDACTED:email]', 'ops'], `${what}: enum values redacted`);
      assert.equal(got['properties']!['to']!['default'], '[REDACTED:email]', `${what}: default redacted`);
      assert.equal(got['properties']!['project']!['const'], '[REDACTED:project]', `${what}: const redacted`);
      assert.deepEqual(got['$defs']!['note']!['required'], ['body']);
      assert.equal(((got['properties']!['items']!['items'] as Record<string, unknown[]>)['anyOf']![1] as Record<string, string>)['$ref'], '#/$defs/note');
    }

    const chatBody = (model: string, stream: boolean): Record<string, unknown> => ({
      model,
      stream,
      max_tokens: 20,
      user: 'jane.doe@example.com',
      stop: ['PRJ-123456', 'END'],
      messages: [
        { role: 'system', name: 'AKIAIOSFODNN7EXAMPLE', content: 'be brief' },
        { role: 'user', name: 'PRJ-123456', content: 'hello' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'send_mail', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: SENSITIVE }] },
      ],
      tools: [{ type: 'function', function: { name: 'send_mail', description: SENSITIVE, parameters: schema() } }],
      ...(model === 'gpt-test'
        ? {
            functions: [{ name: 'legacy_send', description: SENSITIVE, parameters: schema() }],
            response_format: { type: 'json_schema', json_schema: { name: 'answer', description: SENSITIVE, schema: schema() } },
          }
        : {}),
    });

    for (const stream of [false, true]) {
      const mode = stream ? 'streamed' : 'JSON';
      it(`chat (pass-through, ${mode}): redacts tool and function definitions, the response_format schema, message names, stop and user`, async () => {
        const res = await post('/v1/chat/completions', chatBody('gpt-test', stream));
        assert.equal(res.status, 200);
        await res.text();
        const { raw, json } = sentUpstream();
        assertRedacted(raw, 'upstream body');
        const tool = (json['tools'] as { function: Record<string, unknown> }[])[0]!.function;
        assert.equal(tool['name'], 'send_mail', 'function names are identifiers and pass');
        assertRedacted(tool['description'] as string, 'tool description');
        assertSchemaRedacted(tool['parameters'], 'tool parameters');
        const legacy = (json['functions'] as Record<string, unknown>[])[0]!;
        assert.equal(legacy['name'], 'legacy_send');
        assertSchemaRedacted(legacy['parameters'], 'functions[].parameters');
        const jsonSchema = (json['response_format'] as Record<string, Record<string, unknown>>)['json_schema']!;
        assert.equal(jsonSchema['name'], 'answer');
        assertRedacted(jsonSchema['description'] as string, 'json_schema description');
        assertSchemaRedacted(jsonSchema['schema'], 'response_format schema');
        const messages = json['messages'] as Record<string, unknown>[];
        assert.equal(messages[0]!['name'], '[REDACTED:secret_key]');
        assert.equal(messages[1]!['name'], '[REDACTED:project]');
        assert.deepEqual(json['stop'], ['[REDACTED:project]', 'END']);
        assert.equal(json['user'], '[REDACTED:email]');
      });

      it(`chat (translated to an anthropic provider, ${mode}): the provider gets redacted tool definitions, names and stop sequences`, async () => {
        const seen = await sentToAnthropic('/v1/chat/completions', chatBody('claude-direct', stream), stream);
        assertRedacted(seen.raw, 'translated upstream body');
        const tool = (seen.body['tools'] as Record<string, unknown>[])[0]!;
        assert.equal(tool['name'], 'send_mail');
        assertSchemaRedacted(tool['input_schema'], 'input_schema');
        assert.deepEqual(seen.body['stop_sequences'], ['[REDACTED:project]', 'END']);
      });

      it(`legacy completions (${mode}): redacts stop (string and array) and user`, async () => {
        for (const stop of ['PRJ-123456', ['PRJ-123456', 'END']]) {
          env.upstream.requests.length = 0;
          const res = await post('/v1/completions', { model: 'gpt-test', prompt: 'hello', stop, user: 'jane.doe@example.com', stream, max_tokens: 3 });
          assert.equal(res.status, 200);
          await res.text();
          const { raw, json } = sentUpstream();
          assertRedacted(raw, 'upstream body');
          assert.deepEqual(json['stop'], typeof stop === 'string' ? '[REDACTED:project]' : ['[REDACTED:project]', 'END']);
          assert.equal(json['user'], '[REDACTED:email]');
        }
      });
    }

    const messagesBody = (model: string, stream: boolean): Record<string, unknown> => ({
      model,
      max_tokens: 50,
      stream,
      stop_sequences: ['PRJ-123456', 'END'],
      tools: [{ name: 'send_mail', description: SENSITIVE, input_schema: schema() }],
      messages: [{ role: 'user', content: 'hello' }],
    });

    for (const stream of [false, true]) {
      const mode = stream ? 'streamed' : 'JSON';
      it(`messages (pass-through, ${mode}): redacts tool descriptions, input_schema text and stop sequences`, async () => {
        const seen = await sentToAnthropic('/v1/messages', messagesBody('claude-direct', stream), stream);
        assertRedacted(seen.raw, 'pass-through upstream body');
        const tool = (seen.body['tools'] as Record<string, unknown>[])[0]!;
        assert.equal(tool['name'], 'send_mail');
        assertRedacted(tool['description'] as string, 'tool description');
        assertSchemaRedacted(tool['input_schema'], 'input_schema');
        assert.deepEqual(seen.body['stop_sequences'], ['[REDACTED:project]', 'END']);
      });

      it(`messages (translated, ${mode}): the provider gets redacted tool definitions and stop sequences`, async () => {
        const res = await post('/v1/messages', messagesBody('gpt-test', stream));
        assert.equal(res.status, 200);
        await res.text();
        const { raw, json } = sentUpstream();
        assertRedacted(raw, 'translated upstream body');
        const tool = (json['tools'] as { function: Record<string, unknown> }[])[0]!.function;
        assert.equal(tool['name'], 'send_mail');
        assertRedacted(tool['description'] as string, 'tool description');
        assertSchemaRedacted(tool['parameters'], 'tool parameters');
        assert.deepEqual(json['stop'], ['[REDACTED:project]', 'END']);
      });
    }
  });
});
