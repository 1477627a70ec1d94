// The one test bed of the tool tests that go through a gateway: a fake model upstream (scripted per
// test), a deployment (embedded/inline, or PostgreSQL with BullMQ and a worker in this process, as
// `agent-gateway worker` would run), workspaces in a temp directory, and the gateway over them, with
// the agents and tools configuration a test asks for. useToolGateway registers the mocha hooks: the
// bed is set up before the suite, closed after it, and the upstream's script and calls are reset
// before each test.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startWorkerRuntime, type Runtime } from '../../src/runtime';
import type { ConversationItemRecord, RunRecord } from '../../src/store/types';
import { runUpstreamConfig, startRunUpstream, type RunUpstream } from '../fixtures/upstreams/run-upstream';
import { openBackend, type Backend, type BackendEnv } from '../helpers/backends';
import { baseConfigDocument } from '../helpers/config';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { post } from '../responses/http-helpers';
import { runConfig, triggerRun, waitForStatus } from '../runs/helpers';

export type Json = Record<string, unknown>;
export type Message = {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
};

/** The messages of a model request the upstream saw. */
export const messagesOf = (body: Json): Message[] => (body['messages'] as Message[] | undefined) ?? [];
/** The tool results in a model request (how far a scripted model has come). */
export const toolMessages = (body: Json): Message[] => messagesOf(body).filter((m) => m.role === 'tool');
/** The function names a model request offered. */
export const offered = (body: Json): string[] => ((body['tools'] as { function: { name: string } }[] | undefined) ?? []).map((t) => t.function.name);

/** An agent of acme, made by u-admin, on the fake model, with one step unless `steps` says otherwise. */
export function toolAgent(id: string, tools: Json[], patch: Json = {}): Json {
  return {
    id,
    organization: 'acme',
    createdBy: 'u-admin',
    model: 'fake',
    description: 'uses tools',
    name: `Agent ${id.slice(-4)}`,
    tools,
    steps: [{ name: 'Work', prompt: 'Do the work.' }],
    timeoutSeconds: 30,
    ...patch,
  };
}

/** The test configuration's organizations with `tools` of acme (or another organization) set. */
export function organizationsWithTools(tools: Json, orgId = 'acme', organizations = baseConfigDocument()['organizations'] as Json[]): Json[] {
  return organizations.map((org) => (org['id'] === orgId ? { ...org, tools } : org));
}

export interface ToolGatewayOptions {
  /** Default embedded/inline. */
  backend?: Backend;
  /** Agents besides the run tests' own (given: the run configuration is used, queue included). */
  agents?: Json[];
  /** The `tools` section (workspaceDir is the bed's temp directory unless given). */
  tools?: Json;
  /** Other configuration sections (organizations, plugins, server, store …). */
  config?: Json;
  /** Runs after the gateway is closed (the test's own servers). */
  teardown?: () => Promise<unknown>;
}

export interface ToolGateway {
  readonly gw: TestGateway;
  readonly upstream: RunUpstream;
  /** The workspaces root: a conversation's is <root>/<org>/<conversation>. */
  readonly workspaces: string;
  /** A conversation's workspace directory. */
  workspaceOf(conversationId: string, orgId?: string): string;
  /** POST /v1/responses on the fake model as `who` (admin by default). */
  respond(body: Json, who?: 'admin' | 'member' | 'outsider'): Promise<Response>;
  /** Triggers a run of the agent and waits for its end: the run and its conversation's items. */
  runAgent(agentId: string, timeoutMs?: number): Promise<{ run: RunRecord; items: ConversationItemRecord[] }>;
  /** A conversation's items, oldest first. */
  items(conversationId: string): Promise<ConversationItemRecord[]>;
}

/**
 * Registers the bed's hooks in the current describe. `options` is called in the before hook (after
 * the test's own servers started in earlier hooks, so their addresses can be in it).
 */
export function useToolGateway(options: () => ToolGatewayOptions | Promise<ToolGatewayOptions>): ToolGateway {
  let gw: TestGateway | null = null;
  let upstream: RunUpstream | null = null;
  let deployment: BackendEnv | null = null;
  let worker: Runtime | null = null;
  let workspaces: string | null = null;
  let teardown: (() => Promise<unknown>) | undefined;
  const need = <T>(value: T | null, what: string): T => {
    if (value === null) throw new Error(`the tool gateway is not set up (${what})`);
    return value;
  };

  before(async function () {
    this.timeout(180_000);
    const chosen = await options();
    teardown = chosen.teardown;
    const backend = chosen.backend ?? 'embedded/inline';
    upstream = await startRunUpstream();
    deployment = await openBackend(backend, 'tools');
    workspaces = await mkdtemp(path.join(tmpdir(), 'agw-tools-'));
    const base = chosen.agents ? runConfig(upstream) : runUpstreamConfig(upstream);
    const agents = chosen.agents ? { agents: [...(base['agents'] as Json[]), ...chosen.agents] } : {};
    gw = await startTestGateway({
      config: { ...base, ...deployment.config, ...agents, ...chosen.config, tools: { workspaceDir: workspaces, ...chosen.tools } },
      ...(deployment.pg ? { store: deployment.pg.store } : {}),
    });
    if (backend === 'postgres/bullmq') worker = await startWorkerRuntime(gw.gateway.services);
  });
  after(async function () {
    this.timeout(60_000);
    await worker?.close();
    await gw?.close();
    await upstream?.close();
    await deployment?.cleanup();
    await teardown?.();
    if (workspaces) await rm(workspaces, { recursive: true, force: true });
  });
  beforeEach(() => {
    if (!upstream) return;
    upstream.script(null);
    upstream.calls.length = 0;
  });

  const bed: ToolGateway = {
    get gw() {
      return need(gw, 'gateway');
    },
    get upstream() {
      return need(upstream, 'upstream');
    },
    get workspaces() {
      return need(workspaces, 'workspaces');
    },
    workspaceOf: (conversationId, orgId = 'acme') => path.join(need(workspaces, 'workspaces'), orgId, conversationId),
    respond: (body, who = 'admin') => post(`${bed.gw.url}/v1/responses`, { model: 'fake', ...body }, bed.gw.auth(who)),
    async runAgent(agentId, timeoutMs = 30_000) {
      const triggered = await triggerRun(bed.gw, agentId, []);
      const run = await waitForStatus(bed.gw.store, triggered.id, 'terminal', timeoutMs);
      return { run, items: await bed.items(run.conversationId) };
    },
    items: (conversationId) => bed.gw.store.conversations.listItems(conversationId, { order: 'asc', limit: 100 }),
  };
  return bed;
}
