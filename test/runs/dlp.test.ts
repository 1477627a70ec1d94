// With the dlp plugin on, a run's step prompts are redacted per the organization's policy before they
// reach the model (and the conversation records what was sent).
import assert from 'node:assert/strict';
import { organizationsWithDlp } from '../helpers/config';
import { startTestGateway } from '../helpers/gateway';
import { startRunUpstream } from '../fixtures/upstreams/run-upstream';
import { AGENT, runConfig, transcript, triggerRun, waitForStatus } from './helpers';

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
