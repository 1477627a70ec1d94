// Builds svc_shell (and the workspace file tools) on real parts for a test: the project's config
// loader with small limits, workspaces in a fresh temp directory, the real bwrap, and an egress state
// a test can connect a conversation to. The shell has no use for the store: the one it is given throws
// if touched, which also proves that.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ShellToolConfig } from '../../src/config/types';
import type { Store } from '../../src/store/port';
import { createLogger } from '../../src/log/logger';
import { workspaceFileTools } from '../../src/tools/hosted/files';
import { shellTools } from '../../src/tools/hosted/shell';
import type { EgressState, HostedTool, HostedToolSet, ToolCallContext, ToolDeps } from '../../src/tools/types';
import { createWebAccess } from '../../src/tools/web-access';
import { Workspaces } from '../../src/tools/workspace';
import { testConfig } from '../helpers/config';

/** Small limits, so every limit is reached quickly. */
export const TEST_SHELL_LIMITS = {
  cpuSeconds: 1,
  memoryMb: 128,
  maxProcesses: 32,
  wallTimeMs: 5000,
  maxOutputBytes: 4096,
  maxFileMb: 1,
  tmpSizeMb: 8,
} satisfies Partial<ShellToolConfig>;

/** An egress state whose connections the test sets: conversation id → proxy URL. */
export class TestEgress implements EgressState {
  readonly proxies = new Map<string, string>();
  proxyFor(_orgId: string, conversationId: string): Promise<string | null> {
    return Promise.resolve(this.proxies.get(conversationId) ?? null);
  }
}

const NO_STORE = new Proxy({} as Store, {
  get(_target, property) {
    throw new Error(`svc_shell touched the store (${String(property)})`);
  },
});

export interface ShellHarness {
  deps: ToolDeps;
  /** The workspaces root (a fresh temp directory, 0700 as mkdtemp makes it). */
  root: string;
  egress: TestEgress;
  set: HostedToolSet;
  shell: HostedTool;
  file(type: 'svc_file_read' | 'svc_file_write' | 'svc_file_list'): HostedTool;
  /** A call context in conversation `conversationId` of organization acme. */
  ctx(conversationId: string, signal?: AbortSignal): ToolCallContext;
  /** Runs svc_shell and returns the text the model is shown. */
  sh(command: string, conversationId?: string, extra?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function shellHarness(shellConfig: Partial<ShellToolConfig> = {}): Promise<ShellHarness> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'agw-shell-ws-'));
  const web = createWebAccess(['127.0.0.1']);
  const config = testConfig({ tools: { workspaceDir: root, shell: { ...TEST_SHELL_LIMITS, ...shellConfig } } });
  const egress = new TestEgress();
  const workspaces = new Workspaces(root);
  const deps: ToolDeps = {
    config,
    store: NO_STORE,
    logger: createLogger({ level: 'error', silent: true }),
    now: () => new Date(),
    workspaces,
    fetch: web.fetch,
    egress,
  };
  const set = shellTools(deps);
  const shell = set.tools.find((tool) => tool.type === 'svc_shell');
  if (!shell) throw new Error('the shell factory has no svc_shell');
  const files = workspaceFileTools(deps).tools;
  const ctx = (conversationId: string, signal = new AbortController().signal): ToolCallContext => ({
    orgId: 'acme',
    userId: 'u-member',
    conversationId,
    signal,
    workspace: workspaces.of('acme', conversationId),
  });
  return {
    deps,
    root,
    egress,
    set,
    shell,
    file(type) {
      const tool = files.find((t) => t.type === type);
      if (!tool) throw new Error(`no ${type}`);
      return tool;
    },
    ctx,
    async sh(command, conversationId = 'conv-main', extra = {}) {
      return (await shell.execute({ command, ...extra }, ctx(conversationId))).output;
    },
    async close() {
      await web.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** The parts of svc_shell's text: exit code, kill line, stdout, stderr. */
export function parseShellOutput(text: string): { exitCode: string; killed: string | null; stdout: string; stderr: string } {
  const match = /^exit_code: (.*)\n(?:killed: (.*)\n)?--- stdout ---\n([\s\S]*)\n--- stderr ---\n([\s\S]*)$/.exec(text);
  if (!match) throw new Error(`not svc_shell output: ${text.slice(0, 300)}`);
  return { exitCode: match[1]!, killed: match[2] ?? null, stdout: match[3]!, stderr: match[4]! };
}
