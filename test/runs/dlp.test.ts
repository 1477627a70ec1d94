// With the dlp plugin on, a run's step prompts are redacted per the organization's policy before they
// reach the model (and the conversation records what was sent).
import assert from 'node:assert/strict';
import { startTestGateway } from '../helpers/gateway';
import { startRunUpstream } from '../fixtures/upstreams/run-upstream';
import { AGENT, runConfig, transcript, triggerRun, waitForStatus } from './helpers';

describe('run engine with the dlp plugin', function () {
  this.timeout(20_000);
  it('redacts step prompts before they leave for the upstream', async () => {
    const upstream = await startRunUpstream();
    const gw = await startTestGateway({ config: runConfig(upstream, { plugins: { dlp: { enabled: true } } }) });
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
});
