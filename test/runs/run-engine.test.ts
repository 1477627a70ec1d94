// The run engine driven through the run service and a real store (embedded and PostgreSQL), the
// inline queue, and a fake OpenAI-format upstream: every row of the run-status table, the step
// verdict rules, idempotent re-execution.
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors';
import { RunExecutor } from '../../src/runs/executor';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { ADMIN, AGENT, QUICK_AGENT, STRICT_AGENT, runConfig, transcript, triggerRun, waitFor, waitForStatus } from './helpers';

for (const driver of ['embedded', 'postgres'] as const) {
  describe(`run engine (${driver} store, inline queue)`, function () {
    this.timeout(30_000);
    let upstream: RunUpstream;
    let gw: TestGateway;

    before(async () => {
      upstream = await startRunUpstream();
      gw = await startTestGateway({ driver, config: runConfig(upstream) });
    });
    after(async () => {
      await gw?.close();
      await upstream?.close();
    });
    beforeEach(() => upstream.clear());

    it('runs the steps in order in its own conversation and ends in success with the final assistant message as result', async () => {
      const run = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'otters' }]);
      assert.equal(run.status, 'in_progress');
      assert.equal(run.endedAt, null);
      assert.equal(run.result, null);
      assert.equal(run.agentVersion, 1);
      const conversation = await gw.store.conversations.get(run.conversationId);
      assert.equal(conversation?.runId, run.id);
      const done = await waitForStatus(gw.store, run.id, 'terminal');
      assert.equal(done.status, 'success');
      assert.ok(done.endedAt && Date.parse(done.endedAt) >= Date.parse(done.createdAt));
      assert.deepEqual(JSON.parse(done.result ?? 'null'), { role: 'assistant', parts: [{ type: 'text', text: 'Reply to: Summarise the draft.' }] });
      assert.equal(done.stepsCompleted, 2);
      assert.deepEqual(await transcript(gw.store, run.conversationId), [
        'system: Be brief.',
        'user: Write about otters in a  tone.',
        'assistant: Reply to: Write about otters in a  tone.',
        'user: Summarise the draft.',
        'assistant: Reply to: Summarise the draft.',
      ]);
      // The second step's model call carries the whole history so far.
      const second = upstream.stepCalls().find((c) => c.prompt === 'Summarise the draft.');
      assert.deepEqual(
        (second?.body['messages'] as { role: string }[]).map((m) => m.role),
        ['system', 'user', 'assistant', 'user'],
      );
    });

    it('drops unknown input names, and rejects missing required labels (case-sensitive) naming each', async () => {
      const agent = (await gw.store.agents.get(STRICT_AGENT))!;
      await assert.rejects(
        gw.gateway.services.runs.trigger({
          principal: ADMIN,
          agent,
          inputs: [
            { name: 'invoice', value: 'x' },
            { name: 'Notes', value: 'n' },
          ],
          trigger: 'api',
        }),
        (err: unknown) => {
          assert.ok(err instanceof GatewayError);
          assert.equal(err.code, 'missing_inputs');
          assert.equal(err.status, 422);
          assert.match(err.message, /'Invoice'/);
          assert.match(err.message, /'PO'/);
          assert.doesNotMatch(err.message, /Notes/);
          return true;
        },
      );
      const run = await gw.gateway.services.runs.trigger({
        principal: ADMIN,
        agent,
        inputs: [
          { name: 'Invoice', value: 'INV-1' },
          { name: 'PO', value: 'PO-9' },
          { name: 'Extra', value: 'ignored' },
        ],
        trigger: 'api',
      });
      assert.deepEqual(run.inputs, [
        { name: 'Invoice', value: 'INV-1' },
        { name: 'PO', value: 'PO-9' },
      ]);
      const done = await waitForStatus(gw.store, run.id, 'terminal');
      assert.equal(done.status, 'success');
      assert.ok((await transcript(gw.store, run.conversationId)).includes('user: Compare INV-1 with PO-9.'));
    });

    it('writes verdicts: pass and explanation from the judge, not_evaluated without objective, judge request as the contract says', async () => {
      upstream.rule({ match: 'Objective', judge: true, reply: JSON.stringify({ verdict: 'pass', explanation: 'It is about badgers.' }) });
      const run = await triggerRun(gw, AGENT, [
        { name: 'Topic', value: 'badgers' },
        { name: 'Tone', value: 'dry' },
      ]);
      await waitForStatus(gw.store, run.id, 'success');
      const steps = await gw.store.steps.list(run.id);
      assert.deepEqual(
        steps.map((s) => [s.stepNumber, s.name, s.result, s.explanation, s.completed]),
        [
          [1, 'Draft', 'pass', 'It is about badgers.', true],
          [2, 'Summary', 'not_evaluated', null, true],
        ],
      );
      const judge = upstream.judgeCalls().find((c) => c.prompt.includes('badgers'));
      assert.ok(judge, 'the judge was called');
      const format = judge.body['response_format'] as {
        type: string;
        json_schema: { name: string; schema: { properties: Record<string, { enum?: string[]; type: string }> } };
      };
      assert.equal(format.type, 'json_schema');
      assert.equal(format.json_schema.name, 'step_verdict');
      assert.deepEqual(format.json_schema.schema.properties['verdict']?.enum, ['pass', 'fail', 'unknown']);
      assert.equal(format.json_schema.schema.properties['explanation']?.type, 'string');
      assert.match(judge.prompt, /The text is about the topic\./);
      assert.match(judge.prompt, /Reply to: Write about badgers in a dry tone\./);
      assert.equal(judge.body['model'], 'fake');
    });

    it('records fail, and unknown for an unparsable judge reply', async () => {
      upstream.rule({ match: 'walruses', judge: true, reply: JSON.stringify({ verdict: 'fail', explanation: 'Off topic.' }) });
      upstream.rule({ match: 'narwhals', judge: true, reply: 'I think it passes!' });
      const failed = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'walruses' }]);
      const unknown = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'narwhals' }]);
      await waitForStatus(gw.store, failed.id, 'success');
      await waitForStatus(gw.store, unknown.id, 'success');
      assert.deepEqual((await gw.store.steps.list(failed.id))[0]?.result, 'fail');
      assert.deepEqual((await gw.store.steps.list(failed.id))[0]?.explanation, 'Off topic.');
      assert.deepEqual((await gw.store.steps.list(unknown.id))[0]?.result, 'unknown');
    });

    it('leaves a verdict null while it is pending', async () => {
      upstream.rule({ match: 'Summarise', judge: false, delayMs: 800, times: 1 });
      const run = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'seals' }]);
      await waitFor('step 2 in flight', async () =>
        upstream.stepCalls().some((c) => c.prompt === 'Summarise the draft.' && JSON.stringify(c.body).includes('seals')),
      );
      const pending = await gw.store.steps.list(run.id);
      assert.equal(pending[0]?.result, 'pass');
      assert.equal(pending[1]?.result, null);
      assert.equal(pending[1]?.completed, false);
      await waitForStatus(gw.store, run.id, 'success');
    });

    it('ends in failure with result null when a step errors, then retry re-runs the failed step with the same id', async () => {
      upstream.rule({ match: 'Summarise', judge: false, status: 500 });
      const run = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'puffins' }]);
      const failed = await waitForStatus(gw.store, run.id, 'terminal');
      assert.equal(failed.status, 'failure');
      assert.equal(failed.result, null);
      assert.ok(failed.endedAt);
      assert.ok(failed.error && failed.error.length > 0);
      assert.equal(failed.stepsCompleted, 1);
      const before = await transcript(gw.store, run.conversationId);
      assert.match(before[before.length - 1] ?? '', /^system: Run failed: /);
      assert.equal((await gw.store.steps.list(run.id))[1]?.result, null);

      upstream.clear();
      const draftCalls = upstream.stepCalls().filter((c) => c.prompt.includes('puffins')).length;
      const retried = await gw.gateway.services.runs.retryFailedStep(ADMIN, failed);
      assert.equal(retried.id, run.id);
      assert.equal(retried.status, 'in_progress');
      assert.equal(retried.endedAt, null);
      const done = await waitForStatus(gw.store, run.id, 'success');
      assert.equal(done.id, run.id);
      assert.deepEqual(JSON.parse(done.result ?? 'null').parts[0].text, 'Reply to: Summarise the draft.');
      // Step 1 was kept, not executed again; step 2's prompt is in the conversation once.
      assert.equal(upstream.stepCalls().filter((c) => c.prompt.includes('puffins')).length, draftCalls);
      const after = await transcript(gw.store, run.conversationId);
      assert.equal(after.filter((t) => t === 'user: Summarise the draft.').length, 1);
      assert.equal(after.filter((t) => t.startsWith('user: Write about puffins')).length, 1);
      assert.equal(after[after.length - 1], 'assistant: Reply to: Summarise the draft.');
      await assert.rejects(gw.gateway.services.runs.retryFailedStep(ADMIN, done), (err: unknown) => err instanceof GatewayError && err.code === 'conflict');
    });

    it('cancels manually: cancelled, endedAt set, result null, the upstream call aborted', async () => {
      upstream.rule({ match: 'gannets', judge: false, delayMs: 10_000 });
      const run = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'gannets' }]);
      await waitFor('model call', async () => upstream.stepCalls().some((c) => c.prompt.includes('gannets')));
      const cancelled = await gw.gateway.services.runs.cancel(ADMIN, run, 'Stopped by the user.');
      assert.equal(cancelled.status, 'cancelled');
      assert.equal(cancelled.result, null);
      assert.ok(cancelled.endedAt);
      await waitFor('upstream abort', async () => upstream.stepCalls().find((c) => c.prompt.includes('gannets'))?.aborted);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const after = await gw.store.runs.get(run.id);
      assert.equal(after?.status, 'cancelled');
      assert.equal(after?.result, null);
      await assert.rejects(gw.gateway.services.runs.cancel(ADMIN, after!, 'again'), (err: unknown) => err instanceof GatewayError && err.code === 'conflict');
    });

    it('cancels a run past its timeout and aborts its model call', async () => {
      upstream.rule({ match: 'Slow step', judge: false, delayMs: 10_000, times: 1 });
      const run = await triggerRun(gw, QUICK_AGENT, []);
      const done = await waitForStatus(gw.store, run.id, 'terminal', 5000);
      assert.equal(done.status, 'cancelled');
      assert.equal(done.result, null);
      assert.ok(done.endedAt);
      assert.ok(Date.parse(done.endedAt) - Date.parse(done.createdAt) >= 900);
      await waitFor('upstream abort', async () => upstream.stepCalls().find((c) => c.prompt === 'Slow step please.')?.aborted);
    });

    it('restart: a new run with the same inputs, own conversation, latest version; the source untouched', async () => {
      const source = await triggerRun(gw, AGENT, [
        { name: 'Topic', value: 'terns' },
        { name: 'Tone', value: 'warm' },
      ]);
      const ended = await waitForStatus(gw.store, source.id, 'success');
      const restarted = await gw.gateway.services.runs.restart({ ...ADMIN, userId: 'u-member', role: 'member' }, ended);
      assert.notEqual(restarted.id, source.id);
      assert.notEqual(restarted.conversationId, source.conversationId);
      assert.equal(restarted.trigger, 'restart');
      assert.equal(restarted.sourceRunId, source.id);
      assert.equal(restarted.userId, 'u-member');
      assert.deepEqual(restarted.inputs, ended.inputs);
      const done = await waitForStatus(gw.store, restarted.id, 'success');
      assert.ok((await transcript(gw.store, done.conversationId)).includes('user: Write about terns in a warm tone.'));
      assert.deepEqual(await gw.store.runs.get(source.id), ended);
    });

    it('records tool calls and their outputs in the conversation, then the reply', async () => {
      upstream.rule({ match: 'herons', judge: false, toolCalls: [{ id: 'call_h1', name: 'svc_file_read', arguments: '{"path":"a.txt"}' }], times: 1 });
      const run = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'herons' }]);
      await waitForStatus(gw.store, run.id, 'success');
      const items = await gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 });
      assert.deepEqual(
        items.slice(0, 5).map((i) => [i.type, i.role]),
        [
          ['message', 'system'],
          ['message', 'user'],
          ['function_call', null],
          ['svc_call', null],
          ['message', 'assistant'],
        ],
      );
      assert.deepEqual(items[2]?.data, { call_id: 'call_h1', name: 'svc_file_read', arguments: '{"path":"a.txt"}' });
      assert.equal(items[3]?.data['call_id'], 'call_h1');
      // The agent does not have the tool: the model is told so, and the run goes on.
      assert.match(String(items[3]?.data['error']), /not available to agent runs/);
      const followUp = upstream.stepCalls().filter((c) => c.prompt.includes('herons'))[1];
      assert.deepEqual(
        (followUp?.body['messages'] as { role: string }[]).map((m) => m.role),
        ['system', 'user', 'assistant', 'tool'],
      );
    });

    it('re-executing a run never appends an item twice nor asks the model again for a recorded reply', async () => {
      const run = await triggerRun(gw, AGENT, [{ name: 'Topic', value: 'auks' }]);
      await waitForStatus(gw.store, run.id, 'success');
      const items = await transcript(gw.store, run.conversationId);
      const stepCalls = upstream.stepCalls().length;
      // As if the worker had died just before recording progress: back to in progress, no step done.
      const reset = await gw.store.runs.update(run.id, { status: 'in_progress', stepsCompleted: 0, endedAt: null, result: null }, {});
      assert.ok(reset);
      const services = gw.gateway.services;
      const executor = new RunExecutor({
        store: gw.store,
        modelCalls: services.modelCalls,
        logger: services.logger,
        metrics: services.metrics,
        config: services.config,
        tools: services.tools.loop,
        now: () => new Date(),
        active: services.runEngine.active,
        owner: 'test-owner',
        leaseMs: 3000,
      });
      await executor.execute(run.id);
      const again = await gw.store.runs.get(run.id);
      assert.equal(again?.status, 'success');
      assert.deepEqual(await transcript(gw.store, run.conversationId), items);
      assert.equal(upstream.stepCalls().length, stepCalls);
    });
  });
}
