// Runs over HTTP against a fake upstream: trigger (202, 400, 404, 422, dropped inputs, agents with
// triggers), read, restart, evals (aggregate rows on real runs), conversation items, and the cancel and
// retry extensions (permissions, 409).
import assert from 'node:assert/strict';
import request from 'supertest';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { startFakeLlm, type FakeLlm } from './fake-llm';
import { AUTH_ON, waitForRun, type RunView } from './fixtures';

const RUN_AGENT = '55555555-5555-4555-8555-555555555555';
const PRIVATE_AGENT = '66666666-6666-4666-8666-666666666666';
const MISSING = '99999999-9999-4999-8999-999999999999';

type Who = 'admin' | 'member' | 'viewer' | 'outsider';

describe('runs API', () => {
  let llm: FakeLlm;
  let gw: TestGateway;
  before(async () => {
    llm = await startFakeLlm();
    gw = await startTestGateway({
      config: {
        plugins: AUTH_ON,
        providers: { demo: { type: 'demo' }, fake: { type: 'openai', baseUrl: llm.baseUrl, apiKey: 'sk-test' } },
        models: [
          { id: 'demo', provider: 'demo', created: 1700000000 },
          { id: 'fake', provider: 'fake' },
        ],
        agents: [
          {
            id: RUN_AGENT,
            organization: 'acme',
            name: 'Runner',
            createdBy: 'u-admin',
            sharedWith: [
              { user: 'u-member', permissions: ['view'] },
              { group: 'finance', permissions: ['view', 'edit'] },
            ],
            model: 'fake',
            instructions: 'Be brief.',
            inputs: [
              { label: 'Topic', required: true },
              { label: 'Tone', required: false },
            ],
            steps: [{ name: 'Outline', prompt: 'Outline {{Topic}}.', objective: 'An outline of the topic.' }, { prompt: 'Summarise it, tone: {{Tone}}.' }],
            timeoutSeconds: 60,
            triggers: [{ type: 'webhook' }],
          },
          { id: PRIVATE_AGENT, organization: 'acme', name: 'Private', createdBy: 'u-member', model: 'fake', steps: [{ prompt: 'Hi' }] },
        ],
      },
    });
  });
  after(async () => {
    await gw?.close();
    await llm?.close();
  });

  const post = (path: string, who: Who = 'admin') => request(gw.url).post(path).set(gw.auth(who));
  const get = (path: string, who: Who = 'admin') => request(gw.url).get(path).set(gw.auth(who));
  async function trigger(
    inputs: { name: string; value: string }[],
    who: Who = 'admin',
    agentId = RUN_AGENT,
  ): Promise<{ runId: string; conversationId: string }> {
    const res = await post('/v1/agents/runs', who).send({ agentId, inputs });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body;
  }
  const evals = async (runId: string) => (await get(`/v1/runs/${runId}/evals`).expect(200)).body;
  const flat = (body: Record<string, unknown>, error: string) => {
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
    assert.equal(body['error'], error);
  };

  describe('POST /v1/agents/runs', () => {
    let accepted: { runId: string; conversationId: string };
    let finished: RunView;
    before(async () => {
      accepted = await trigger([
        { name: 'Topic', value: 'tides' },
        { name: 'Bogus', value: 'dropped' },
      ]);
      finished = await waitForRun(gw, accepted.runId);
    });

    it('answers 202 with exactly {runId, conversationId}, and the run executes to success', () => {
      assert.deepEqual(Object.keys(accepted).sort(), ['conversationId', 'runId']);
      assert.match(accepted.runId, /^[0-9a-f-]{36}$/);
      assert.notEqual(accepted.conversationId, accepted.runId);
      assert.equal(finished.status, 'success');
      assert.equal(finished.runId, accepted.runId);
      assert.equal(finished.agentId, RUN_AGENT);
      assert.equal(finished.conversationId, accepted.conversationId);
      assert.ok(finished.endedAtUtc !== null && finished.endedAtUtc >= finished.createdAtUtc);
      const result = JSON.parse(finished.result ?? 'null') as { role: string; parts: { type: string; text: string }[] };
      assert.equal(result.role, 'assistant');
      assert.equal(result.parts[0]?.type, 'text');
      assert.match(result.parts[0]?.text ?? '', /Summarise it/);
    });

    it('drops input names the agent does not declare and substitutes the declared ones', async () => {
      const stored = await gw.store.runs.get(accepted.runId);
      assert.deepEqual(stored?.inputs, [{ name: 'Topic', value: 'tides' }]);
      assert.ok(llm.requests.some((r) => JSON.stringify(r['messages']).includes('Outline tides.')));
      assert.ok(!llm.requests.some((r) => JSON.stringify(r['messages']).includes('dropped')));
    });

    it('runs an agent that has triggers', async () => {
      assert.equal((await get(`/v1/agents/${RUN_AGENT}`).expect(200)).body.hasTriggers, true);
    });

    it('answers 422 naming each missing required label (case-sensitive)', async () => {
      for (const inputs of [[], [{ name: 'topic', value: 'x' }]]) {
        const res = await post('/v1/agents/runs').send({ agentId: RUN_AGENT, inputs }).expect(422);
        flat(res.body, 'Unprocessable Entity');
        assert.match(res.body.message, /Topic/);
      }
    });

    it('answers 400 for a missing agentId or a body failing the schema', async () => {
      for (const body of [
        {},
        { inputs: [] },
        { agentId: RUN_AGENT, inputs: 'Topic=x' },
        { agentId: RUN_AGENT, inputs: [{ name: 'Topic' }] },
        { agentId: 42 },
      ]) {
        const res = await post('/v1/agents/runs').send(body);
        assert.equal(res.status, 400, JSON.stringify(body));
        flat(res.body, 'Bad Request');
      }
      const missing = await post('/v1/agents/runs').send({}).expect(400);
      assert.match(missing.body.message, /agentId/);
      const notJson = await post('/v1/agents/runs').set('content-type', 'application/json').send('{"agentId":').expect(400);
      flat(notJson.body, 'Bad Request');
    });

    it('answers 404 for an unknown or invisible agent, 401 without a key', async () => {
      for (const [who, agentId] of [
        ['admin', MISSING],
        ['admin', 'not-a-uuid'],
        ['viewer', PRIVATE_AGENT],
        ['outsider', RUN_AGENT],
      ] as const) {
        const res = await post('/v1/agents/runs', who).send({ agentId, inputs: [{ name: 'Topic', value: 'x' }] });
        assert.equal(res.status, 404, `${who} ${agentId}`);
        assert.deepEqual(res.body, { error: 'Not found', message: `Agent ${agentId} not found.` });
      }
      const anonymous = await request(gw.url).post('/v1/agents/runs').send({ agentId: RUN_AGENT }).expect(401);
      flat(anonymous.body, 'Unauthorized');
    });
  });

  describe('GET /v1/runs/{runId} and restart', () => {
    let source: RunView;
    before(async () => {
      source = await waitForRun(gw, (await trigger([{ name: 'Topic', value: 'rivers' }], 'viewer')).runId);
    });

    it('reads the run for whoever may see it, 404 for the rest, 400 for a malformed id', async () => {
      assert.equal((await get(`/v1/runs/${source.runId}`, 'viewer').expect(200)).body.runId, source.runId);
      assert.equal((await get(`/v1/runs/${source.runId}`, 'member').expect(200)).body.runId, source.runId);
      for (const [who, id] of [
        ['outsider', source.runId],
        ['admin', MISSING],
      ] as const) {
        const res = await get(`/v1/runs/${id}`, who).expect(404);
        assert.deepEqual(res.body, { error: 'Not found', message: `Run ${id} not found.` });
      }
      flat((await get('/v1/runs/123').expect(400)).body, 'Bad Request');
      flat((await get('/v1/runs/123/evals').expect(400)).body, 'Bad Request');
      flat((await post('/v1/runs/123/restart').expect(400)).body, 'Bad Request');
    });

    it('does not show another member a run of an agent they cannot see', async () => {
      const hidden = await trigger([], 'member', PRIVATE_AGENT);
      await get(`/v1/runs/${hidden.runId}`, 'viewer').expect(404);
      await get(`/v1/runs/${hidden.runId}/evals`, 'viewer').expect(404);
      await post(`/v1/runs/${hidden.runId}/restart`, 'viewer').expect(404);
      await waitForRun(gw, hidden.runId, 'member');
    });

    it('restarts into a new run with its own conversation and the same inputs; the source is untouched', async () => {
      const res = await post(`/v1/runs/${source.runId}/restart`).set('content-type', 'application/json').send('not even json').expect(202);
      assert.deepEqual(Object.keys(res.body).sort(), ['conversationId', 'runId']);
      assert.notEqual(res.body.runId, source.runId);
      assert.notEqual(res.body.conversationId, source.conversationId);
      const restarted = await waitForRun(gw, res.body.runId);
      assert.equal(restarted.status, 'success');
      assert.deepEqual((await gw.store.runs.get(res.body.runId))?.inputs, [{ name: 'Topic', value: 'rivers' }]);
      assert.deepEqual((await get(`/v1/runs/${source.runId}`).expect(200)).body, source);
      await post(`/v1/runs/${source.runId}/restart`, 'outsider').expect(404);
      await post(`/v1/runs/${MISSING}/restart`).expect(404);
    });
  });

  describe('the run error extension', () => {
    it('a run that failed says why in `error` (code and message), as its conversation does', async () => {
      const { runId, conversationId } = await trigger([{ name: 'Topic', value: 'BOOM' }]);
      await waitForRun(gw, runId);
      const body = (await get(`/v1/runs/${runId}`).expect(200)).body as RunView & { error: { code: string; message: string } | null };
      assert.equal(body.status, 'failure');
      assert.equal(body.error?.code, 'upstream_error');
      assert.deepEqual(Object.keys(body.error ?? {}).sort(), ['code', 'message']);
      assert.ok(body.error?.message, 'a message');
      const items = (await get(`/v1/conversations/${conversationId}/items?order=desc&limit=1`).expect(200)).body as { data: { content: { text: string }[] }[] };
      assert.equal(items.data[0]?.content[0]?.text, `Run failed: ${body.error?.message ?? ''}`);
    });

    it('a successful run has error null', async () => {
      const { runId } = await trigger([{ name: 'Topic', value: 'lakes' }]);
      await waitForRun(gw, runId);
      const done = (await get(`/v1/runs/${runId}`).expect(200)).body as { status: string; error: unknown };
      assert.equal(done.status, 'success');
      assert.equal(done.error, null);
    });
  });

  describe('GET /v1/runs/{runId}/evals', () => {
    it('pass: a successful run whose judged step passed; steps ordered, unnamed step null, not_evaluated', async () => {
      const run = await waitForRun(gw, (await trigger([{ name: 'Topic', value: 'clouds' }])).runId);
      const body = await evals(run.runId);
      assert.deepEqual(body, {
        runId: run.runId,
        result: 'pass',
        steps: [
          { stepNumber: 1, name: 'Outline', result: 'pass', explanation: 'judged pass' },
          { stepNumber: 2, name: null, result: 'not_evaluated', explanation: null },
        ],
      });
      assert.deepEqual(await evals(run.runId), body, 're-fetching is safe');
    });

    it('fail: a step verdict not satisfied', async () => {
      const run = await waitForRun(gw, (await trigger([{ name: 'Topic', value: 'OBJ-FAIL' }])).runId);
      assert.equal(run.status, 'success');
      const body = await evals(run.runId);
      assert.equal(body.result, 'fail');
      assert.equal(body.steps[0].result, 'fail');
    });

    it('unknown: an unparsable judge reply and no step failed', async () => {
      const run = await waitForRun(gw, (await trigger([{ name: 'Topic', value: 'OBJ-UNKNOWN' }])).runId);
      const body = await evals(run.runId);
      assert.equal(body.steps[0].result, 'unknown');
      assert.equal(body.result, 'unknown');
    });

    it('partial: a run that failed after a judged step passed (failure still answers 200, result null)', async () => {
      const run = await waitForRun(
        gw,
        (
          await trigger([
            { name: 'Topic', value: 'sand' },
            { name: 'Tone', value: 'BOOM' },
          ])
        ).runId,
      );
      assert.equal(run.status, 'failure');
      assert.equal(run.result, null);
      assert.ok(run.endedAtUtc !== null);
      const body = await evals(run.runId);
      assert.equal(body.result, 'partial');
      assert.deepEqual(
        body.steps.map((s: { result: string }) => s.result),
        ['pass', 'not_evaluated'],
      );
    });

    it("another organization's run answers 404 in the flat envelope, also to that organization's admin", async () => {
      const run = await waitForRun(gw, (await trigger([{ name: 'Topic', value: 'borders' }])).runId);
      const res = await get(`/v1/runs/${run.runId}/evals`, 'outsider').expect(404);
      assert.deepEqual(res.body, { error: 'Not found', message: `Run ${run.runId} not found.` });
      await get(`/v1/runs/${run.runId}/evals`).expect(200);
    });

    it('skipped: a run that failed before any evaluated step', async () => {
      const run = await waitForRun(gw, (await trigger([{ name: 'Topic', value: 'BOOM' }])).runId);
      assert.equal(run.status, 'failure');
      assert.equal((await evals(run.runId)).result, 'skipped');
    });

    it('skipped: an agent none of whose steps has an objective', async () => {
      const run = await waitForRun(gw, (await trigger([], 'member', PRIVATE_AGENT)).runId, 'member');
      assert.equal(run.status, 'success');
      assert.equal((await request(gw.url).get(`/v1/runs/${run.runId}/evals`).set(gw.auth('member')).expect(200)).body.result, 'skipped');
    });

    it('404 for a missing or inaccessible run', async () => {
      const res = await get(`/v1/runs/${MISSING}/evals`).expect(404);
      assert.deepEqual(res.body, { error: 'Not found', message: `Run ${MISSING} not found.` });
    });
  });

  describe('cancel and retry extensions', () => {
    it('pending while in progress; cancel needs edit (403 with view only, 404 invisible); cancelled is terminal (409 again)', async () => {
      llm.slowMs = 2500;
      const { runId } = await trigger([{ name: 'Topic', value: 'SLOW' }]);
      const pending = await evals(runId);
      assert.equal(pending.result, 'pending');
      flat((await post(`/v1/runs/${runId}/cancel`, 'member').expect(403)).body, 'Forbidden');
      flat((await post(`/v1/runs/${runId}/cancel`, 'outsider').expect(404)).body, 'Not found');
      flat((await post('/v1/runs/nope/cancel').expect(400)).body, 'Bad Request');
      const res = await post(`/v1/runs/${runId}/cancel`, 'viewer').expect(200);
      assert.equal(res.body.status, 'cancelled');
      assert.equal(res.body.result, null);
      assert.ok(res.body.endedAtUtc);
      assert.deepEqual(Object.keys(res.body).sort(), ['agentId', 'conversationId', 'createdAtUtc', 'endedAtUtc', 'error', 'result', 'runId', 'status']);
      assert.equal(res.body.error.code, 'cancelled');
      flat((await post(`/v1/runs/${runId}/cancel`).expect(409)).body, 'Conflict');
      assert.equal((await get(`/v1/runs/${runId}`).expect(200)).body.status, 'cancelled');
      assert.equal((await evals(runId)).result, 'skipped');
    });

    it('retry re-runs the failed step: same id, back to in_progress with endedAtUtc null, then success', async () => {
      llm.flaky = true;
      const failed = await waitForRun(
        gw,
        (
          await trigger([
            { name: 'Topic', value: 'moss' },
            { name: 'Tone', value: 'FLAKY' },
          ])
        ).runId,
      );
      assert.equal(failed.status, 'failure');
      flat((await post(`/v1/runs/${failed.runId}/retry`, 'member').expect(403)).body, 'Forbidden');
      await post(`/v1/runs/${failed.runId}/retry`, 'outsider').expect(404);
      llm.flaky = false;
      const res = await post(`/v1/runs/${failed.runId}/retry`).expect(200);
      assert.equal(res.body.runId, failed.runId);
      assert.equal(res.body.status, 'in_progress');
      assert.equal(res.body.endedAtUtc, null);
      const done = await waitForRun(gw, failed.runId);
      assert.equal(done.status, 'success');
      assert.equal((await evals(failed.runId)).result, 'pass');
      flat((await post(`/v1/runs/${failed.runId}/retry`).expect(409)).body, 'Conflict');
    });
  });

  describe('GET /v1/conversations/{conversation_id}/items', () => {
    let run: RunView;
    before(async () => {
      run = await waitForRun(gw, (await trigger([{ name: 'Topic', value: 'glaciers' }])).runId);
    });
    const items = (query = '', who: Who = 'admin') => get(`/v1/conversations/${run.conversationId}/items${query}`, who);

    it('lists the run conversation newest first in the OpenAI list shape', async () => {
      const res = await items().expect(200);
      assert.equal(res.body.object, 'list');
      assert.equal(res.body.has_more, false);
      const data = res.body.data as { id: string; type: string; role?: string; content?: { type: string; text: string }[] }[];
      assert.ok(data.length >= 4, 'instructions, two prompts, two replies');
      assert.equal(res.body.first_id, data[0]?.id);
      assert.equal(res.body.last_id, data[data.length - 1]?.id);
      const asc = (await items('?order=asc').expect(200)).body.data as typeof data;
      assert.deepEqual(
        asc.map((i) => i.id),
        data.map((i) => i.id).reverse(),
      );
      const texts = asc.filter((i) => i.type === 'message').map((i) => `${i.role}: ${(i.content ?? []).map((c) => c.text).join('')}`);
      assert.ok(
        texts.some((t) => t.startsWith('user: ') && t.includes('Outline glaciers.')),
        texts.join('\n'),
      );
      assert.ok(
        texts.some((t) => t.startsWith('assistant: ') && t.includes('Answer to: Outline glaciers.')),
        texts.join('\n'),
      );
    });

    it('pages with limit, has_more and after', async () => {
      const all = (await items('?order=asc&limit=100').expect(200)).body.data as { id: string }[];
      const first = await items('?order=asc&limit=2').expect(200);
      assert.equal(first.body.has_more, true);
      assert.deepEqual(
        first.body.data.map((i: { id: string }) => i.id),
        all.slice(0, 2).map((i) => i.id),
      );
      const next = await items(`?order=asc&limit=2&after=${first.body.last_id}`).expect(200);
      assert.deepEqual(
        next.body.data.map((i: { id: string }) => i.id),
        all.slice(2, 4).map((i) => i.id),
      );
    });

    it('answers 404 in the nested envelope to someone who may not read it, 400 for a bad limit', async () => {
      const res = await items('', 'outsider').expect(404);
      assert.equal(res.body.error.message, `Conversation ${run.conversationId} not found.`);
      assert.equal(res.body.error.code, null);
      await get('/v1/conversations/conv_nope/items').expect(404);
      const bad = await items('?limit=0').expect(400);
      assert.equal(typeof bad.body.error.message, 'string');
    });
  });
});
