// svc_shell: a command run by /bin/sh -c in a bubblewrap sandbox (sandbox-args.ts says what it sees,
// sandbox.ts how it is bounded), in the conversation's workspace (the directory svc_file_* use).
// Without a sandbox that works here (the start-up check runs one) the tool is disabled: a command is
// never run outside one. A conversation's commands run one at a time (its workspace is handed to the
// sandbox user between them); different conversations' run side by side.
import { randomBytes } from 'node:crypto';
import { access, constants as fsConstants, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { withoutProxySecrets } from '../../egress-proxy';
import { ToolFailure, type HostedTool, type HostedToolFactory } from '../../types';
import { formatOutcome, outcomeOf, type OutcomeLimits } from './outcome';
import { runInSandbox, type HostUser } from './sandbox';
import { hostSystemDirs, SANDBOX_WORKSPACE } from './sandbox-args';
import { handOver, KeyedQueue, openPathTo } from './workspace-access';

/** Time a call may take beyond its command's wall time: waiting for an earlier command, handing over the workspace. */
const SETUP_MARGIN_MS = 15_000;
/** Room for the exit-code and kill lines around the kept output. */
const REPORT_MARGIN_BYTES = 1024;
/** The start-up check's workspace: `+` never appears in an organization's directory name (workspace.ts). */
const CHECK_DIR_PREFIX = '+sandbox-check-';
const CHECK_WALL_TIME_MS = 10_000;

export const shellTools: HostedToolFactory = (deps) => {
  const config = deps.config.tools.shell;
  // As root, never root inside: the sandbox runs as the configured unprivileged host user.
  const hostUser: HostUser | null = process.getuid?.() === 0 ? { uid: config.sandboxUid, gid: config.sandboxGid } : null;
  const systemDirs = hostSystemDirs();
  const limits: OutcomeLimits = {
    cpuSeconds: config.cpuSeconds,
    memoryMb: config.memoryMb,
    maxProcesses: config.maxProcesses,
    maxFileMb: config.maxFileMb,
    tmpSizeMb: config.tmpSizeMb,
    wallTimeMs: config.wallTimeMs,
    maxOutputBytes: config.maxOutputBytes,
  };
  const oneAtATime = new KeyedQueue();
  // Aborted at close(): a shutting-down gateway does not wait out running commands.
  const closing = new AbortController();
  const running = new Set<Promise<unknown>>();

  const prepare = async (workspaceDir: string): Promise<void> => {
    if (hostUser === null) return;
    await openPathTo(workspaceDir, deps.workspaces.root);
    await handOver(workspaceDir, hostUser);
  };

  const run = (workspaceDir: string, command: string, options: { proxyUrl: string | null; wallTimeMs: number; signal?: AbortSignal }) =>
    runInSandbox({
      bwrapPath: config.bwrapPath,
      hostUser,
      spec: { workspaceDir, proxyUrl: options.proxyUrl, limits, systemDirs },
      command,
      wallTimeMs: options.wallTimeMs,
      maxOutputBytes: config.maxOutputBytes,
      ...(options.signal ? { signal: options.signal } : {}),
    });

  const shell: HostedTool = {
    type: 'svc_shell',
    description:
      `Run a shell command (/bin/sh -c) in a sandbox. The current directory and HOME is ${SANDBOX_WORKSPACE}, the conversation's workspace ` +
      '(read-write; the same files svc_file_read, svc_file_write and svc_file_list see). The system is read-only, /tmp is private and ' +
      'emptied after each command, and there is no network unless the conversation is connected to an egress profile (then HTTP_PROXY ' +
      `is set). Limits per command: ${config.wallTimeMs} ms wall time, ${config.cpuSeconds} s CPU and ${config.memoryMb} MiB memory per ` +
      `process, ${config.maxProcesses} processes, ${config.maxOutputBytes} bytes of output. The result gives the exit code, whether a ` +
      'limit killed the command, and its stdout and stderr.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command line, run by /bin/sh -c in the workspace.' },
        timeout_ms: { type: 'integer', minimum: 1, description: `Wall-time limit in milliseconds (at most ${config.wallTimeMs}, the default).` },
      },
      required: ['command'],
      additionalProperties: false,
    },
    limits: { timeoutMs: config.wallTimeMs + SETUP_MARGIN_MS, maxOutputBytes: config.maxOutputBytes + REPORT_MARGIN_BYTES },

    async execute(args, ctx) {
      const command = args['command'];
      if (typeof command !== 'string' || command.trim() === '') throw new ToolFailure('Argument command must be a non-empty string.');
      if (command.includes('\0')) throw new ToolFailure('The command contains a NUL character.');
      const timeout = args['timeout_ms'];
      if (timeout !== undefined && timeout !== null && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1)) {
        throw new ToolFailure('Argument timeout_ms must be a positive integer.');
      }
      const wallTimeMs = Math.min(typeof timeout === 'number' ? timeout : config.wallTimeMs, config.wallTimeMs);
      const workspaceDir = await ctx.workspace.ensure();
      const proxyUrl = await deps.egress.proxyFor(ctx.orgId, ctx.conversationId);

      const signal = AbortSignal.any([ctx.signal, closing.signal]);
      const call = oneAtATime.run(workspaceDir, async () => {
        if (signal.aborted) throw new ToolFailure('The call was cancelled before the command started.');
        await prepare(workspaceDir);
        const result = await run(workspaceDir, command, { proxyUrl, wallTimeMs, signal });
        if (!result.started)
          throw new ToolFailure(`The sandbox did not start: ${result.stderr.trim().slice(0, 500) || `bwrap exit status ${result.exitCode}`}`);
        // The sandbox needs the proxy URL (and any password in it) to use the proxy; the model is not shown it.
        return { output: withoutProxySecrets(formatOutcome(result, outcomeOf(result, { ...limits, wallTimeMs })), proxyUrl) };
      });
      running.add(call);
      void call.catch(() => undefined).finally(() => running.delete(call));
      return call;
    },
  };

  return {
    tools: [shell],

    /** Kills the commands still running (each call returns, saying it was cancelled). */
    async close() {
      closing.abort();
      await Promise.allSettled([...running]);
    },

    /** bwrap is there and runs `true` in the sandbox this configuration builds, in a workspace under the real root. */
    async check() {
      try {
        await access(config.bwrapPath, fsConstants.X_OK);
      } catch {
        return `bwrap is not installed at ${config.bwrapPath} (install the Debian package bubblewrap, or set tools.shell.bwrapPath)`;
      }
      // Its own name: gateways sharing a data directory may start at the same time.
      const probe = path.join(deps.workspaces.root, `${CHECK_DIR_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
      try {
        await mkdir(probe, { recursive: true, mode: 0o700 });
        await prepare(probe);
        const result = await run(probe, 'true', { proxyUrl: null, wallTimeMs: CHECK_WALL_TIME_MS });
        if (result.started && result.exitCode === 0) return null;
        const said = result.stderr.trim().slice(0, 500) || (result.stopped ? `stopped: ${result.stopped}` : `exit status ${result.exitCode}`);
        const hint = /Permission denied/.test(said)
          ? ` (the sandbox user ${hostUser ? `uid ${hostUser.uid}` : 'of the gateway'} must be able to pass through every directory above ${deps.workspaces.root})`
          : '';
        return `bwrap cannot run the sandbox here: ${said}${hint}`;
      } catch (err) {
        return `the sandbox could not be tried: ${err instanceof Error ? err.message : String(err)}`;
      } finally {
        await rm(probe, { recursive: true, force: true }).catch(() => undefined);
      }
    },
  };
};
