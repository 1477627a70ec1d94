// Agents from the config: versions on edit, soft delete on removal (runs stay readable with agentId
// null), and the webhook extension (secret URLs for editors only, POST starts a run as the creator).
import assert from 'node:assert/strict';
import request from 'supertest';
import { syncAgents } from '../../src/agents/sync';
import { webhookToken } from '../../src/agents/webhook-token';
import { createLogger } from '../../src/log/logger';
import { startTestGateway, testConfig, type ConfigDocument, type TestGateway } from '../helpers/gateway';
import { AUTH_ON, insertRun, waitForRun } from './fixtures';

const HOOKED = '77777777-7777-4777-8777-777777777777';
const DOOMED = '88888888-8888-4888-8888-888888888888';
const logger = createLogger({ level: 'error', silent: true });

function agents(patch: { instructions?: string; withDoomed?: boolean } = {}): ConfigDocument {
  const hooked = {
    id: HOOKED,
    organization: 'acme',
    name: 'Hooked',
    createdBy: 'u-admin',
    sharedWith: [{ user: 'u-member', permissions: ['view'] }],
    model: 'demo',
    instructions: patch.instructions ?? 'Be brief.',
    inputs: [{ label: 'Topic', required: true }],
    steps: [{ name: 'Outline', prompt: 'Outline {{Topic}}.', objective: 'An outline.' }],
    timeoutSeconds: 60,
    triggers: [{ type: 'schedule', cron: '0 0 1 1 *' }, { type: 'webhook' }],
  };
  const doomed = {
    id: DOOMED,
    organization: 'acme',
    name: 'Doomed',
    createdBy: 'u-member',
    model: 'demo',
    steps: [{ prompt: 'Hi' }],
    triggers: [{ type: 'webhook' }],
  };
  return { plugins: AUTH_ON, agents: patch.withDoomed === false ? [hooked] : [hooked, doomed] };
}

describe('agents from the config, and webhooks', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ config: agents() });
  });
  after(() => gw.close());

  describe('sync', () => {
    it('loads each agent as version 1 with the creator name of its user', async () => {
      const agent = await gw.store.agents.get(HOOKED);
      assert.equal(agent?.version, 1);
      assert.equal(agent?.creatorName, 'Admin');
      assert.equal((await gw.store.agents.get(DOOMED))?.creatorName, 'Member');
    });

    it('keeps the version for an unchanged definition and makes a new one for an edited agent', async () => {
      const same = await syncAgents(testConfig(agents()), gw.store, logger);
      assert.deepEqual(same, { changed: [], deleted: [] });
      assert.equal((await gw.store.agents.get(HOOKED))?.version, 1);
      const edited = await syncAgents(testConfig(agents({ instructions: 'Be very brief.' })), gw.store, logger);
      assert.deepEqual(edited.changed, [HOOKED]);
      const agent = await gw.store.agents.get(HOOKED);
      assert.equal(agent?.version, 2);
      assert.equal(agent?.instructions, 'Be very brief.');
      assert.equal((await gw.store.agents.getVersion(HOOKED, 1))?.definition.instructions, 'Be brief.');
      // And back: restoring the config is another edit (version 3), not a rollback of history.
      await syncAgents(testConfig(agents()), gw.store, logger);
      assert.equal((await gw.store.agents.get(HOOKED))?.version, 3);
    });

    it('soft-deletes an agent removed from the config: gone from the API, its runs readable with agentId null', async () => {
      const run = await insertRun(gw.store, DOOMED, new Date().toISOString(), 'success', 'u-member');
      const visible = await request(gw.url).get(`/v1/runs/${run.id}`).set(gw.auth('member')).expect(200);
      assert.equal(visible.body.agentId, DOOMED);

      const removed = await syncAgents(testConfig(agents({ withDoomed: false })), gw.store, logger);
      assert.deepEqual(removed.deleted, [DOOMED]);
      const after = await request(gw.url).get(`/v1/runs/${run.id}`).set(gw.auth('member')).expect(200);
      assert.equal(after.body.agentId, null);
      assert.equal(after.body.runId, run.id);
      await request(gw.url).get(`/v1/runs/${run.id}/evals`).set(gw.auth('member')).expect(200);
      await request(gw.url).get(`/v1/agents/${DOOMED}`).set(gw.auth('member')).expect(404);
      await request(gw.url).post(`/v1/runs/${run.id}/restart`).set(gw.auth('member')).expect(404);
      await request(gw.url).post('/v1/agents/runs').set(gw.auth('member')).send({ agentId: DOOMED }).expect(404);
      const listed = await request(gw.url).get('/v1/agents/list').set(gw.auth('admin')).expect(200);
      assert.ok(!listed.body.items.some((i: { agentId: string }) => i.agentId === DOOMED));

      // Back in the config: visible again.
      await syncAgents(testConfig(agents()), gw.store, logger);
      assert.equal((await request(gw.url).get(`/v1/runs/${run.id}`).set(gw.auth('member')).expect(200)).body.agentId, DOOMED);
    });
  });

  describe('webhooks', () => {
    let url: string;
    before(async () => {
      const res = await request(gw.url).get(`/v1/agents/${HOOKED}/webhooks`).set(gw.auth('admin')).expect(200);
      assert.equal(res.body.items.length, 1);
      url = res.body.items[0].url;
    });
    const path = (u: string) => new URL(u).pathname;

    it('shows each webhook trigger URL with its trigger index, derived from the installation secret', async () => {
      const res = await request(gw.url).get(`/v1/agents/${HOOKED}/webhooks`).set(gw.auth('admin')).expect(200);
      assert.equal(res.body.items[0].triggerIndex, 1);
      assert.ok(url.startsWith(`${gw.url}/v1/webhooks/`), url);
      const stored = await gw.store.settings.get('webhook-secret');
      assert.ok(stored);
      // Stable across restarts and processes: a function of the stored secret, agent and index only.
      assert.equal(path(url), `/v1/webhooks/${webhookToken(Buffer.from(stored, 'base64url'), HOOKED, 1)}`);
    });

    it('is 403 for a user who sees the agent without edit, 404 for one who does not see it', async () => {
      const forbidden = await request(gw.url).get(`/v1/agents/${HOOKED}/webhooks`).set(gw.auth('member')).expect(403);
      assert.deepEqual(Object.keys(forbidden.body).sort(), ['error', 'message']);
      assert.equal(forbidden.body.error, 'Forbidden');
      for (const who of ['viewer', 'outsider'] as const) {
        const res = await request(gw.url).get(`/v1/agents/${HOOKED}/webhooks`).set(gw.auth(who)).expect(404);
        assert.equal(res.body.error, 'Not found');
      }
      await request(gw.url).get('/v1/agents/nope/webhooks').set(gw.auth('admin')).expect(400);
    });

    it('starts a run as the agent creator without an API key, answering like the run trigger', async () => {
      const res = await request(gw.url)
        .post(path(url))
        .send({
          inputs: [
            { name: 'Topic', value: 'hooks' },
            { name: 'Extra', value: 'dropped' },
          ],
        })
        .expect(202);
      assert.deepEqual(Object.keys(res.body).sort(), ['conversationId', 'runId']);
      const run = await waitForRun(gw, res.body.runId);
      assert.equal(run.status, 'success');
      const stored = await gw.store.runs.get(res.body.runId);
      assert.equal(stored?.trigger, 'webhook');
      assert.equal(stored?.userId, 'u-admin');
      assert.deepEqual(stored?.inputs, [{ name: 'Topic', value: 'hooks' }]);
    });

    it('answers 422 naming a missing required label (no body at all too)', async () => {
      const res = await request(gw.url).post(path(url)).send({ inputs: [] }).expect(422);
      assert.equal(res.body.error, 'Unprocessable Entity');
      assert.match(res.body.message, /Topic/);
      await request(gw.url).post(path(url)).expect(422);
    });

    it('is 404 for a token we did not issue, a tampered one, or one of a deleted agent', async () => {
      const token = path(url).split('/').pop()!;
      const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
      for (const t of ['nope', tampered, token.replace(`${HOOKED}.1.`, `${HOOKED}.0.`)]) {
        const res = await request(gw.url).post(`/v1/webhooks/${t}`).send({}).expect(404);
        assert.deepEqual(res.body, { error: 'Not found', message: 'Webhook not found.' });
      }
      const doomed = await request(gw.url).get(`/v1/agents/${DOOMED}/webhooks`).set(gw.auth('member')).expect(200);
      const doomedPath = path(doomed.body.items[0].url);
      await syncAgents(testConfig(agents({ withDoomed: false })), gw.store, logger);
      await request(gw.url).post(doomedPath).send({}).expect(404);
      await syncAgents(testConfig(agents()), gw.store, logger);
    });
  });
});
