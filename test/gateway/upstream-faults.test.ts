// Fault injection against the real process: every provider type is pointed at an upstream that
// answers garbage (control bytes in headers, broken status lines, truncated and malformed chunked
// bodies, invalid JSON and SSE, resets mid-body, replies over the size bounds). The gateway must stay
// up, answer each caller with the OpenAI error envelope or end its stream with an error event, keep
// every call in the audit trail across a restart, and never write the upstream's (or the prompt's)
// text into a log line.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { generateTestServiceAccount } from '../fixtures/upstreams/vertex-upstream';
import { BEDROCK_TEST_CREDENTIALS } from '../fixtures/upstreams/bedrock-upstream';
import { JSON_FAULTS, STREAM_FAULTS, startGarbageUpstream, type GarbageUpstream } from '../fixtures/upstreams/garbage-upstream';
import { startServer, tempDir, writeConfig, type ServerProcess } from '../helpers/process';

const MARKER = 'MARKER-7731-okapi-echo';
const ADMIN_KEY = 'agw_fault_injection_admin_key_0123456789abcdef';
const PROVIDER_TYPES = ['openai', 'anthropic', 'bedrock-anthropic', 'vertex-anthropic', 'gemini'] as const;

function providerConfig(type: (typeof PROVIDER_TYPES)[number], baseUrl: string, serviceAccount: string): Record<string, unknown> {
  const common = { type, retries: { max: 0 }, limits: { maxBodyBytes: 4096, maxSseLineBytes: 4096 }, timeouts: { firstByteMs: 20_000, idleMs: 20_000 } };
  switch (type) {
    case 'openai':
      return { ...common, baseUrl: `${baseUrl}/v1`, apiKey: 'sk-test' };
    case 'anthropic':
      return { ...common, baseUrl, apiKey: 'sk-ant-test' };
    case 'bedrock-anthropic':
      return { ...common, baseUrl, ...BEDROCK_TEST_CREDENTIALS };
    case 'vertex-anthropic':
      return { ...common, baseUrl, projectId: 'test-project', region: 'us-east5', serviceAccountKey: serviceAccount, tokenUrl: `${baseUrl}/token` };
    case 'gemini':
      return { ...common, baseUrl, apiKey: 'gm-test' };
  }
}

interface Outcome {
  requestId: string;
  status: number;
  contentType: string;
  text: string;
}

async function call(url: string, requestId: string, model: string, fault: string, stream: boolean): Promise<Outcome> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: `fault=${fault} ${MARKER}` }] }),
  });
  return { requestId, status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The caller got the OpenAI error envelope, or (a stream that had started) a terminal error event. */
function assertFailedCleanly(outcome: Outcome): void {
  const label = `${outcome.requestId}: ${outcome.status} ${outcome.contentType} ${outcome.text.slice(0, 300)}`;
  if (outcome.contentType.startsWith('text/event-stream')) {
    assert.equal(outcome.status, 200, label);
    const events = outcome.text.split('\n').filter((line) => line.startsWith('data: '));
    const last = events.at(-1) ?? '';
    let error: { message?: unknown } | undefined;
    try {
      error = (JSON.parse(last.slice('data: '.length)) as { error?: { message?: unknown } }).error;
    } catch {
      assert.fail(`the last event is not JSON: ${label}`);
    }
    assert.equal(typeof error?.message, 'string', label);
    return;
  }
  assert.ok(outcome.status >= 400 && outcome.status <= 599, label);
  assert.match(outcome.contentType, /^application\/json/, label);
  const body = JSON.parse(outcome.text) as { error?: { message?: unknown; type?: unknown } };
  assert.equal(typeof body.error?.message, 'string', label);
  assert.equal(typeof body.error?.type, 'string', label);
}

async function auditRequestIds(url: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let after: string | null = null;
  for (let page = 0; page < 100; page++) {
    const query: string = after ? `?limit=100&after=${encodeURIComponent(after)}` : '?limit=100';
    const res = await fetch(`${url}/v1/admin/audit${query}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { items: { requestId: string }[]; nextCursor?: string | null };
    for (const record of body.items) ids.add(record.requestId);
    if (!body.nextCursor) break;
    after = body.nextCursor;
  }
  return ids;
}

describe('upstream fault injection (real process, every provider type)', function () {
  this.timeout(300_000);
  let dir: string;
  let upstream: GarbageUpstream;
  let server: ServerProcess | null = null;

  before(async () => {
    dir = tempDir('agw-faults-');
    upstream = await startGarbageUpstream(MARKER);
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stays up, fails each call cleanly, keeps every call in the audit trail across a restart and logs none of the upstream text', async () => {
    const serviceAccount = generateTestServiceAccount().json;
    const providers = Object.fromEntries(PROVIDER_TYPES.map((type) => [`p-${type}`, providerConfig(type, upstream.baseUrl, serviceAccount)]));
    const configFile = writeConfig(dir, {
      server: { host: '127.0.0.1', port: 0 },
      store: { driver: 'embedded', path: path.join(dir, 'data') },
      queue: { driver: 'inline' },
      providers,
      models: PROVIDER_TYPES.map((type) => ({ id: `m-${type}`, provider: `p-${type}` })),
      organizations: [{ id: 'default', name: 'Default', models: ['*'], users: [{ id: 'admin', name: 'Admin', role: 'admin', keys: [ADMIN_KEY] }] }],
      logging: { level: 'debug' },
      plugins: { auth: { enabled: true }, audit: { enabled: true } },
    });
    const args = ['serve', '--config', configFile];
    server = await startServer(args, { timeoutMs: 120_000 });
    const requestIds: string[] = [];
    for (const type of PROVIDER_TYPES) {
      const cases = [...JSON_FAULTS.map((fault) => ({ fault, stream: false })), ...STREAM_FAULTS.map((fault) => ({ fault, stream: true }))];
      // A provider's calls run at once: concurrent garbage must not take the process down either.
      const outcomes = await Promise.all(
        cases.map(({ fault, stream }) => {
          const requestId = `fault.${type}.${fault}.${stream ? 'stream' : 'json'}`;
          requestIds.push(requestId);
          return call(server!.url, requestId, `m-${type}`, fault, stream);
        }),
      );
      const unclean: string[] = [];
      for (const outcome of outcomes) {
        try {
          assertFailedCleanly(outcome);
        } catch (err) {
          unclean.push((err as Error).message);
        }
      }
      assert.deepEqual(unclean, [], 'calls that did not fail cleanly');
    }
    assert.equal(upstream.faulted, requestIds.length, 'every call reached the garbage upstream');
    assert.equal(server.child.exitCode, null, 'the gateway is still running');
    assert.equal((await fetch(`${server.url}/health/live`)).status, 200);

    // A clean stop flushes the audit buffer; the next process reads the trail back.
    assert.equal(await server.stop('SIGTERM'), 0);
    const firstLog = server.stderr();
    server = await startServer(args, { timeoutMs: 120_000 });
    const recorded = await auditRequestIds(server.url);
    const missing = requestIds.filter((id) => !recorded.has(id));
    assert.deepEqual(missing, [], 'calls missing from the audit trail');

    const log = `${firstLog}\n${server.stderr()}`;
    assert.match(log, /"message":"request failed"/, 'the failures were logged (the capture works)');
    const leaking = log.split('\n').filter((line) => line.includes(MARKER));
    assert.deepEqual(leaking, [], 'log lines carrying upstream or prompt text');
  });
});
