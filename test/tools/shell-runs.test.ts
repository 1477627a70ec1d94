// svc_shell in agent runs, on both deployments (embedded/inline, and postgres/bullmq where the run
// executes on a worker, whose tool set ran its own start-up check): the agent's model calls the shell,
// the command works in the run's conversation workspace, and the call is an svc_call item of the run.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startWorkerRuntime, type Runtime } from '../../src/runtime';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { BACKENDS, openBackend, type BackendEnv } from '../helpers/backends';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { runConfig, triggerRun, waitForStatus } from '../runs/helpers';

type Json = Record<string, unknown>;
type Message = { role: string; content?: unknown };
const toolMessages = (body: Json): Message[] => ((body['messages'] as Message[]) ?? []).filter((m) => m.role === 'tool');
const SHELL_AGENT = '5a1e0000-0000-4000-8000-000000000081';

for (const backend of BACKENDS) {
  describe(`svc_shell in agent runs (${backend})`, function () {
    this.timeout(60_000);
    let upstream: RunUpstream;
    let gw: TestGateway;
    let deployment: BackendEnv | null = null;
    let workspaces: string;
    let worker: Runtime | null = null;

    before(async function () {
      this.timeout(120_000);
      upstream = await startRunUpstream();
      deployment = await openBackend(backend, 'shell');
      workspaces = await mkdtemp(path.join(tmpdir(), 'agw-shell-runs-'));
      const base = runConfig(upstream);
      const agents = [
        ...(base['agents'] as Json[]),
        {
          id: SHELL_AGENT,
          organization: 'acme',
          createdBy: 'u-admin',
          model: 'fake',
          description: 'counts with the shell',
          name: 'Counter',
          instructions: 'Use the shell.',
          tools: [{ type: 'svc_shell' }],
          steps: [{ name: 'Count', prompt: 'Count the words.' }],
          timeoutSeconds: 30,
        },
      ];
      gw = await startTestGateway({
        config: { ...base, ...deployment.config, agents, tools: { workspaceDir: workspaces, shell: { wallTimeMs: 5000 } } },
        ...(deployment.pg ? { store: deployment.pg.store } : {}),
      });
      if (backend === 'postgres/bullmq') worker = await startWorkerRuntime(gw.gateway.services);
    });
    after(async () => {
      await worker?.close();
      await gw?.close();
      await upstream?.close();
      await deployment?.cleanup();
      await rm(workspaces, { recursive: true, force: true });
    });

    it('runs the command in the run’s workspace and records it as an svc_call item', async () => {
      upstream.script((body) => {
        const tools = toolMessages(body);
        if (tools.length === 0) {
          const command = 'printf "one two three\\n" > words.txt && wc -w < words.txt';
          return { toolCalls: [{ id: 'sh1', name: 'svc_shell', arguments: JSON.stringify({ command }) }] };
        }
        return { reply: `Counted: ${String(tools[0]!.content)}` };
      });
      const run = await triggerRun(gw, SHELL_AGENT, []);
      const done = await waitForStatus(gw.store, run.id, 'terminal', 30_000);
      assert.equal(done.status, 'success', JSON.stringify(done));
      const shown = 'exit_code: 0\n--- stdout ---\n3\n--- stderr ---\n(empty)';
      assert.match(String(done.result), /Counted: exit_code: 0/);
      const items = await gw.store.conversations.listItems(run.conversationId, { order: 'asc', limit: 100 });
      const call = items.find((item) => item.type === 'svc_call');
      assert.equal(call?.status, 'completed');
      assert.equal(call?.data['name'], 'svc_shell');
      assert.equal(call?.data['output'], shown);
      const file = path.join(workspaces, 'acme', run.conversationId, 'words.txt');
      assert.equal(await readFile(file, 'utf8'), 'one two three\n');
      if (process.getuid?.() === 0) assert.equal((await stat(file)).uid, 65534, 'written by the unprivileged sandbox user');
    });
  });
}
