// With the dlp plugin on, a run's step prompts are redacted per the organization's policy before they
// reach the model (and the conversation records what was sent).
import assert from 'node:assert/strict';
import { organizationsWithDlp } from '../helpers/config';
import { startTestGateway } from '../helpers/gateway';
import { startRunUpstream } from '../fixtures/upstreams/run-upstream';
import type { Principal } from '../../src/store/types';
import { messagesOf, toolAgent, toolMessages, useToolGateway } from '../tools/tool-gateway';
import { AGENT, runConfig, transcript, triggerRun, waitFor, waitForStatus } from './helpers';

describe('run engine with the dlp plugin', function () {
  this.timeout(90_000); // a run of two steps on the embedded store, on a busy shared machine
  it('redacts step prompts before they leave for the upstream', async () => {
    const upstream = await startRunUpstream();
    const gw = await startTestGateway({ config: runConfig(upstream, { plugins: { dlp: { enabled: true } }, organizations: organizationsWithDlp() }) });
    try {
      const run = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'mail to bob@example.com' }]);
      await waitForStatus(gw.store, run.id, 'success');
      const sent = upstream.stepCalls().map((c) => JSON.stringify(c.body));
      assert.ok(sent.length >= 2);
      for (const body of sent) assert.doesNotMatch(body, /bob@example\.com/);
      assert.match(sent[0] ?? '', /\[REDACTED:email\]/);
      assert.ok((await transcript(gw.store, run.conversationId)).every((line) => !line.includes('bob@example.com')));
    } finally {
      await gw.close();
      await upstream.close();
    }
  });

  it('leaves step prompts unchanged for an organization without a dlp block', async () => {
    const upstream = await startRunUpstream();
    const gw = await startTestGateway({ config: runConfig(upstream, { plugins: { dlp: { enabled: true } } }) });
    try {
      const run = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'mail to bob@example.com' }]);
      await waitForStatus(gw.store, run.id, 'success');
      assert.match(JSON.stringify(upstream.stepCalls()[0]?.body), /bob@example\.com/);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});

describe('run engine with the dlp plugin: tool outputs, runs of several organizations at once', function () {
  this.timeout(120_000);
  const GUARDED = '5a1e0000-0000-4000-8000-0000000000f1';
  const UNGUARDED = '5a1e0000-0000-4000-8000-0000000000f2';
  const OUTSIDER: Principal = { orgId: 'other', userId: 'u-outsider', keyId: null, role: 'admin', groups: [] };
  const bed = useToolGateway(() => ({
    agents: [
      toolAgent(GUARDED, [{ type: 'svc_file_write' }, { type: 'svc_file_read' }], {
        steps: [{ prompt: 'First step, slowly.' }, { prompt: 'Second step, with the notes.' }],
      }),
      { ...toolAgent(UNGUARDED, []), organization: 'other', createdBy: 'u-outsider', steps: [{ prompt: 'Another organization.' }] },
    ],
    config: {
      plugins: { dlp: { enabled: true } },
      // acme has a policy; other has none, and may use the fake model.
      organizations: organizationsWithDlp().map((org) => (org['id'] === 'other' ? { ...org, models: ['*'] } : org)),
    },
  }));

  it("redacts a tool's output in every step, whatever runs of other organizations start meanwhile", async () => {
    const { gw, upstream } = bed;
    upstream.rule({ match: 'First step', judge: false, reply: 'noted', delayMs: 1500 });
    upstream.script((body) => {
      const messages = messagesOf(body);
      const lastUser = [...messages].reverse().find((m) => m.role === 'user');
      if (typeof lastUser?.content !== 'string' || !lastUser.content.includes('Second step')) return null;
      const results = toolMessages(body).length;
      if (results === 0) return { toolCalls: [{ id: 'call_w', name: 'svc_file_write', arguments: '{"path":"n.txt","content":"mail jane.doe@example.com"}' }] };
      if (results === 1) return { toolCalls: [{ id: 'call_r', name: 'svc_file_read', arguments: '{"path":"n.txt"}' }] };
      return { reply: 'done' };
    });
    const guarded = await triggerRun(gw, GUARDED, []);
    // While the guarded run waits for its first step's reply, a run of an organization without a policy starts.
    await waitFor('the guarded run to reach its first model call', async () => upstream.calls.some((c) => c.prompt.includes('First step')));
    const unguardedAgent = await gw.store.agents.get(UNGUARDED);
    const unguarded = await gw.gateway.services.runs.trigger({ principal: OUTSIDER, agent: unguardedAgent!, inputs: [], trigger: 'api' });
    await waitForStatus(gw.store, unguarded.id, 'success', 30_000);
    await waitForStatus(gw.store, guarded.id, 'success', 30_000);
    const afterRead = upstream.calls.filter((c) => !c.judge && toolMessages(c.body).length === 2);
    assert.equal(afterRead.length, 1, 'one model call saw the file read');
    const sent = JSON.stringify(afterRead[0]!.body);
    assert.doesNotMatch(sent, /jane\.doe@example\.com.*jane\.doe@example\.com/s, 'only the model-written call arguments hold the address');
    const readResult = toolMessages(afterRead[0]!.body)[1]!;
    assert.match(String(readResult.content), /\[REDACTED:email\]/);
    assert.doesNotMatch(String(readResult.content), /jane\.doe@example\.com/);
  });
});
