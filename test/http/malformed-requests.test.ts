// Malformed requests get JSON in their path family's envelope, never a 500 or an HTML page: a NUL in
// a path or query parameter, a path Express cannot percent-decode, and what Node's HTTP parser itself
// refuses (answered by the server's clientError handler). Sent over raw sockets to a listening server,
// since an HTTP client would refuse to send most of them.
import assert from 'node:assert/strict';
import net from 'node:net';
import { rmSync } from 'node:fs';
import { familyOfPath } from '../../src/http/path-family';
import { routes } from '../../src/generated/routes';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { createTestSchema } from '../helpers/store';
import { waitFor } from '../helpers/wait';
import { startServer, tempDir, writeConfig, type ServerProcess } from '../helpers/process';

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `bytes` on a fresh connection and reads the reply until the server closes or ends it. */
function rawRequest(url: string, bytes: Buffer | string): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete reply; got: ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`));
    }, 20_000);
    const done = (): void => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return;
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      const body = text.slice(split + 4);
      const length = Number(headers['content-length'] ?? NaN);
      if (Number.isFinite(length) && Buffer.byteLength(body) < length) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    };
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      done();
    });
    socket.on('end', done);
    socket.on('close', done);
    socket.on('error', reject);
    socket.write(bytes);
  });
}

const get = (target: string): string => `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;

function json(reply: RawReply): unknown {
  assert.match(reply.headers['content-type'] ?? '', /^application\/json/, `a JSON reply, got ${reply.status} ${reply.body.slice(0, 200)}`);
  return JSON.parse(reply.body) as unknown;
}

const AGENT = '11111111-1111-4111-8111-111111111111';

describe('malformed requests: JSON in the path family envelope', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({
      driver: 'postgres',
      config: {
        agents: [
          {
            id: AGENT,
            organization: 'acme',
            name: 'Echo',
            createdBy: 'u-admin',
            model: 'demo',
            inputs: [{ label: 'Topic' }],
            steps: [{ prompt: 'About {{Topic}}' }],
          },
        ],
      },
    });
  });
  after(() => gw?.close());

  it('names the same family as the operations for every route template', () => {
    for (const route of routes) assert.equal(familyOfPath(route.template.replace(/\{[^}]+\}/g, 'x')), route.family, route.template);
  });

  it('a NUL in a path parameter is a 400 naming the parameter, not a 500 from the store', async () => {
    const nested = await rawRequest(gw.url, get('/v1/conversations/%00/items'));
    assert.equal(nested.status, 400, nested.body);
    assert.deepEqual(json(nested), {
      error: {
        message: "Invalid request: 'conversation_id' must not contain a NUL character (path parameter).",
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'conversation_id',
      },
    });
    const flat = await rawRequest(gw.url, get('/v1/agents/ab%00cd'));
    assert.equal(flat.status, 400, flat.body);
    assert.deepEqual(json(flat), { error: 'Bad Request', message: "Invalid request: 'agentId' must not contain a NUL character (path parameter)." });
  });

  it('a NUL in a query parameter is a 400 naming the parameter', async () => {
    const reply = await rawRequest(gw.url, get('/v1/responses/resp_1?starting_after=%00'));
    assert.equal(reply.status, 400, reply.body);
    assert.deepEqual(json(reply), {
      error: {
        message: "Invalid request: 'starting_after' must not contain a NUL character (query parameter).",
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'starting_after',
      },
    });
  });

  it('an invalid percent-escape or overlong UTF-8 in a path parameter is a 400 in JSON, not an HTML page', async () => {
    const cases: [string, 'flat' | 'openai'][] = [
      ['/v1/runs/%E0%A4%A', 'flat'],
      ['/v1/runs/%zz', 'flat'],
      ['/v1/conversations/%C0%AF/items', 'openai'],
      ['/v1/responses/%ED%A0%80', 'openai'],
    ];
    const message = 'Invalid request: the path is not valid percent-encoded UTF-8 (RFC 3986).';
    for (const [target, family] of cases) {
      const reply = await rawRequest(gw.url, get(target));
      assert.equal(reply.status, 400, `${target}: ${reply.body}`);
      const expected =
        family === 'flat' ? { error: 'Bad Request', message } : { error: { message, type: 'invalid_request_error', code: 'invalid_request', param: null } };
      assert.deepEqual(json(reply), expected, target);
    }
  });

  it('a body nested thousands of levels deep is a 400 in the family envelope, not a 500 from a stack overflow', async () => {
    const deep = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const message = 'Invalid request: the body nests arrays and objects more than 256 levels deep.';
    const post = (path: string, body: string): Promise<Response> =>
      fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    // A translated model: its conversion and the provider's re-serialisation walk the whole value.
    const tools = (levels: number): string => `[{"type":"function","function":{"name":"f","parameters":{"type":"object","default":${deep(levels)}}}}]`;
    const chat = await post('/v1/chat/completions', `{"model":"demo","messages":[{"role":"user","content":"hi"}],"tools":${tools(5000)}}`);
    assert.equal(chat.status, 400);
    assert.deepEqual(await chat.json(), { error: { message, type: 'invalid_request_error', code: 'invalid_request', param: null } });
    const messages = await post(
      '/v1/messages',
      `{"model":"demo","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"a":${deep(5000)}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}]}`,
    );
    assert.equal(messages.status, 400);
    assert.deepEqual(await messages.json(), { type: 'error', error: { type: 'invalid_request_error', message } });
    const responses = await post('/v1/responses', `{"model":"demo","input":"hi","zzz":${deep(100_000)}}`);
    assert.equal(responses.status, 400);
    assert.equal(((await responses.json()) as { error: { message: string } }).error.message, message);
    const flat = await post('/v1/agents/runs', `{"agentId":"a","inputs":${deep(5000)}}`);
    assert.equal(flat.status, 400);
    assert.deepEqual(await flat.json(), { error: 'Bad Request', message });
    // Nesting real requests use still goes through.
    const nested = await post('/v1/chat/completions', `{"model":"demo","messages":[{"role":"user","content":"hi"}],"tools":${tools(200)}}`);
    assert.equal(nested.status, 200, await nested.clone().text());
  });

  it('a lone surrogate escape (valid JSON, not Unicode) in a stored response is kept as U+FFFD, not a 500 from PostgreSQL', async () => {
    for (const stream of [false, true]) {
      const body = `{"model":"demo","store":true,"stream":${String(stream)},"instructions":"be \\udc00 brief","input":[{"role":"user","content":"hi \\ud800 there \\ud83d\\ude00"}]}`;
      const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      const id = /"id":"(resp_[0-9a-f]+)"/.exec(text)?.[1];
      assert.ok(id, text.slice(0, 300));
      const storedText = async (): Promise<string | null> => {
        const read = await fetch(`${gw.url}/v1/responses/${id}/input_items`);
        if (read.status !== 200) return null;
        const items = (await read.json()) as { data: { content: { text: string }[] }[] };
        return items.data[0]?.content[0]?.text ?? null;
      };
      let stored: string | null = null;
      await waitFor(async () => (stored = await storedText()) !== null, { what: 'the input items stored' });
      assert.equal(stored, 'hi \ufffd there \ud83d\ude00');
    }
  });

  it("a lone surrogate or NUL escape in an agent run's inputs is stored as U+FFFD, not a 500 from PostgreSQL", async () => {
    for (const value of ['x \\ud800 y', 'x \\u0000 y']) {
      const res = await fetch(`${gw.url}/v1/agents/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"agentId":"${AGENT}","inputs":[{"name":"Topic","value":"${value}"}]}`,
      });
      assert.equal(res.status, 202, await res.clone().text());
      const { runId } = (await res.json()) as { runId: string };
      const run = await fetch(`${gw.url}/v1/runs/${runId}`);
      assert.equal(run.status, 200);
    }
    const invoked = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"model":"agent/${AGENT}","input":"x \\ud800 y"}`,
    });
    assert.equal(invoked.status, 200, await invoked.clone().text());
  });

  it("a /v1/messages caller gets Anthropic's error type for each status: request_too_large for 413, invalid_request_error for other 4XX", async () => {
    const key = gw.auth('member');
    const typeOf = async (res: Response): Promise<string> => ((await res.json()) as { type: string; error: { type: string } }).error.type;
    const wrongType = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { ...key, 'content-type': 'text/plain' }, body: 'hello' });
    assert.equal(wrongType.status, 415);
    assert.equal(await typeOf(wrongType), 'invalid_request_error');
    const tooLarge = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', max_tokens: 1, messages: [{ role: 'user', content: 'x'.repeat(11 * 1024 * 1024) }] }),
    });
    assert.equal(tooLarge.status, 413);
    assert.equal(await typeOf(tooLarge), 'request_too_large');
  });

  it("a request Node's parser refuses (a 64 kB URL, a raw NUL) is answered in JSON, then the connection closes", async () => {
    const long = await rawRequest(gw.url, get(`/v1/messages?q=${'a'.repeat(64 * 1024)}`));
    assert.equal(long.status, 431);
    assert.equal(long.headers['connection'], 'close');
    assert.deepEqual(json(long), {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'Request line and headers are larger than the server accepts; send a shorter URL or fewer headers.' },
    });
    const nul = await rawRequest(gw.url, `GET /v1/agents/li\0st HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    assert.equal(nul.status, 400);
    assert.deepEqual(json(nul), { error: 'Bad Request', message: 'Malformed HTTP request: it does not follow the HTTP/1.1 message syntax (RFC 9112).' });
    const header = await rawRequest(gw.url, `GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\0b\r\n\r\n`);
    assert.equal(header.status, 400);
    assert.equal((json(header) as { error: { code: string } }).error.code, 'invalid_request');
    // The server is still up and answering.
    const ok = await rawRequest(gw.url, get('/health/live'));
    assert.equal(ok.status, 200);
  });
});

describe('malformed requests: the gateway process answers parser errors in JSON', function () {
  this.timeout(180_000);
  let root: string;
  let schema: Awaited<ReturnType<typeof createTestSchema>> | undefined;
  let server: ServerProcess | undefined;
  before(async () => {
    root = tempDir('agw-malformed-');
    schema = await createTestSchema('malformed');
    const config = writeConfig(root, {
      server: { host: '127.0.0.1', port: 0 },
      store: { driver: 'postgres', url: schema.url },
      providers: { demo: { type: 'demo' } },
      models: [{ id: 'demo', provider: 'demo' }],
      organizations: [{ id: 'default', name: 'Default', models: ['*'] }],
      agents: [],
    });
    server = await startServer(['serve', '--config', config], { env: { GATEWAY_ADMIN_KEY: 'agw_malformed_admin_key_0123456789abcdef' }, timeoutMs: 120_000 });
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await schema?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('a 64 kB URL gets a 431 with the nested envelope from `serve`', async () => {
    const reply = await rawRequest(server!.url, get(`/v1/models?q=${'a'.repeat(64 * 1024)}`));
    assert.equal(reply.status, 431);
    assert.equal((json(reply) as { error: { code: string } }).error.code, 'headers_too_large');
  });
});
