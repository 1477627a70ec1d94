// Exactly-once run execution when the event loop stalls for longer than the run's lease: in one
// process the recovery sweep must not start a second execution beside the first; across two processes
// the one that took the lease over executes and the stalled one, fenced by the lease generation, stops
// before it writes or calls the model. The fake upstream counts the model calls of every step.
import assert from 'node:assert/strict';
import path from 'node:path';
import { buildApp, type GatewayApp } from '../../src/app';
import { createLogger } from '../../src/log/logger';
import { startServeRuntime, type Runtime } from '../../src/runtime';
import { recoverOrphans } from '../../src/runs/sweepers';
import { syncConfiguredState } from '../../src/startup';
import { testConfig } from '../helpers/gateway';
import { tempDir } from '../helpers/process';
import { createTestSchema } from '../helpers/store';
import { createStore } from '../../src/store/index';
import type { Store } from '../../src/store/port';
import { startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { killAll, startProcess, writeProcessConfig } from '../queue/processes';
import { ADMIN, AGENT, runConfig, transcript, waitForStatus } from './helpers';
import { busyWait, stallUntilTakenOver } from './stall';

const logger = createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' });
const LEASE_SECONDS = 2;

/** Model calls per step of one run of AGENT (step 1 judged), as the upstream saw them. */
function callsPerStep(upstream: RunUpstream, topic: string): { step1: number; step2: number; judge: number } {
  return {
    step1: upstream.stepCalls().filter((c) => c.prompt.includes(`Write about ${topic}`)).length,
    step2: upstream.stepCalls().filter((c) => c.prompt === 'Summarise the draft.').length,
    judge: upstream.judgeCalls().length,
  };
}

async function assertConsistent(store: Store, runId: string, topic: string): Promise<void> {
  const run = await store.runs.get(runId);
  assert.equal(run?.status, 'success');
  assert.equal(run?.stepsCompleted, 2);
  assert.equal(run?.leaseOwner, null);
  assert.deepEqual(await transcript(store, run.conversationId), [
    'system: Be brief.',
    `user: Write about ${topic} in a  tone.`,
    `assistant: Reply to: Write about ${topic} in a  tone.`,
    'user: Summarise the draft.',
    'assistant: Reply to: Summarise the draft.',
  ]);
  assert.deepEqual(
    (await store.steps.list(runId)).map((s) => [s.completed, s.result]),
    [
      [true, 'pass'],
      [true, 'not_evaluated'],
    ],
  );
}

describe('exactly-once run execution under a stalled event loop (PostgreSQL, inline queue)', function () {
  this.timeout(120_000);
  let upstream: RunUpstream;
  let schema: Awaited<ReturnType<typeof createTestSchema>>;
  let store: Store;
  let app: GatewayApp | null = null;
  let runtime: Runtime | null = null;

  before(async () => {
    upstream = await startRunUpstream();
    schema = await createTestSchema('stall');
    store = await createStore({ driver: 'postgres', path: '', url: schema.url, retentionDays: 30, queryTimeoutMs: 15_000 }, { logger });
  });
  beforeEach(() => {
    upstream.clear();
    upstream.calls.length = 0;
  });
  afterEach(async () => {
    await runtime?.close();
    await app?.close();
    runtime = null;
    app = null;
    await killAll();
  });
  after(async () => {
    await store?.close();
    await schema?.drop();
    await upstream?.close();
  });

  /** A gateway in this process whose step-prompt hook runs `onStall` once, for the prompt naming `topic`. */
  async function startStallingGateway(topic: string, onStall: (gateway: GatewayApp) => void): Promise<GatewayApp> {
    const config = testConfig(runConfig(upstream, { queue: { driver: 'inline', concurrency: 8, leaseSeconds: LEASE_SECONDS } }));
    await syncConfiguredState(config, store, logger);
    const gateway = await buildApp(config, { store, logger });
    app = gateway;
    let stalled = false;
    runtime = await startServeRuntime(gateway.services, {
      redactorFor: async () => (text) => {
        if (!stalled && text.includes(topic)) {
          stalled = true;
          onStall(gateway);
        }
        return text;
      },
    });
    return gateway;
  }

  it('in one process: a stall longer than the lease does not start a second execution; each step calls the model once', async () => {
    const gateway = await startStallingGateway('solo', (gw) => {
      busyWait(LEASE_SECONDS * 1000 * 2.5);
      // The recovery sweep's timer is the first to run after the stall: the run's lease has expired.
      const s = gw.services;
      void recoverOrphans({ store: s.store, queue: s.runEngine.queue, metrics: s.metrics, logger, active: s.runEngine.active, now: () => new Date() }, 0);
    });
    const agent = (await store.agents.get(AGENT))!;
    const run = await gateway.services.runs.trigger({ principal: ADMIN, agent, inputs: [{ name: 'Topic', value: 'solo' }], trigger: 'api' });
    await waitForStatus(store, run.id, 'terminal', 60_000);
    assert.deepEqual(callsPerStep(upstream, 'solo'), { step1: 1, step2: 1, judge: 1 });
    await assertConsistent(store, run.id, 'solo');
    assert.equal((await store.runs.get(run.id))?.attempts, 1, 'the lease was taken once');
  });

  it('across two processes: the process that took the lease over executes; the stalled one stops before its next write or model call', async () => {
    // Process B: a gateway of its own (child process) on the same database, whose recovery sweep takes
    // over runs whose lease expired.
    const configFile = writeProcessConfig(
      path.join(tempDir('agw-stall-'), 'gateway.yaml'),
      runConfig(upstream, {
        store: { driver: 'postgres', url: schema.url },
        queue: { driver: 'inline', concurrency: 8, leaseSeconds: LEASE_SECONDS },
        logging: { level: 'info', accessLog: false },
      }),
    );
    await startProcess('serve', configFile, 60_000);
    let runId = '';
    let takenOver = false;
    // Process A (this one) stalls in step 1 until B holds the run (read from PostgreSQL by a child).
    const gateway = await startStallingGateway('duo', (gw) => {
      takenOver = stallUntilTakenOver(schema.url, runId, gw.services.runEngine.owner, 90_000);
    });
    const agent = (await store.agents.get(AGENT))!;
    const run = await gateway.services.runs.trigger({ principal: ADMIN, agent, inputs: [{ name: 'Topic', value: 'duo' }], trigger: 'api' });
    runId = run.id;
    await waitForStatus(store, run.id, 'terminal', 90_000);
    assert.ok(takenOver, 'process B took the run over while process A was stalled');
    assert.deepEqual(callsPerStep(upstream, 'duo'), { step1: 1, step2: 1, judge: 1 });
    await assertConsistent(store, run.id, 'duo');
    const done = await store.runs.get(run.id);
    assert.equal(done?.attempts, 2, 'taken once by A, once by B');
    assert.equal(done?.leaseGeneration, 2);
  });
});
