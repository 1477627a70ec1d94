// Process entry for `npm start`, `npm run worker` and `npx agent-gateway <command>`.
import { createServer, type Server } from 'node:http';
import { buildApp, type GatewayApp } from './app';
import { redactUrl } from './store/index';
import { ConfigError, loadConfig, resolveConfigPath } from './config/load';
import { CliError, flag, positional } from './cli/args';
import { runAdminOp, type AdminOp } from './cli/admin-ops';
import { EmbeddedStoreBusy, loadCliConfig, openContext } from './cli/context';
import { callControlServer, startControlServer, type ControlServer } from './cli/control-socket';
import { controlSocketOf } from './cli/embedded-lock';
import { answerClientErrors } from './http/client-error';
import { errorFields } from './log/logger';
import { startServeRuntime, startWorkerRuntime, type Runtime } from './runtime';
import { applyV8Settings } from './v8-settings';
import path from 'node:path';
import { openapiText } from './operations/meta/docs';

const USAGE = `usage: agent-gateway <command> [--config FILE]
  serve                                   serve the API (default)
  worker                                  run worker only (queue.driver bullmq)
  keys create --org O --user U [--name N] create an API key (printed once)
  keys revoke KEY_ID                      revoke a key
  keys list --org O                       list keys (never the key itself)
  audit list --org O [--since T] [--limit N]  print audit records as JSON lines
  config check [--config FILE]            validate the configuration (every problem, with its fix)
  openapi                                 print the OpenAPI document
  help, --help, -h                        print this usage`;

/** A command line the CLI does not understand: the usage goes to stderr and the exit code is 2. */
class UsageError extends CliError {}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function fail(message: string): never {
  process.stderr.write(`agent-gateway: ${message.split('\n')[0]}\n`);
  process.exit(1);
}

async function serve(argv: string[], worker: boolean): Promise<void> {
  applyV8Settings();
  // Listen for the stop signals from the first moment: one that arrives while the gateway starts
  // stops it as soon as it is up. `on`, not `once`: a terminal's Ctrl-C or a service manager signals
  // the whole process group and npm forwards the same signal again, so one stop may bring two
  // signals, and a second one without a listener would kill the process before its records are flushed.
  let stopRequested: NodeJS.Signals | null = null;
  let onStop: (signal: NodeJS.Signals) => void = (signal) => {
    stopRequested ??= signal;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => onStop(signal));
  const { config: checked } = await loadCliConfig(argv, process.env);
  if (worker) {
    // A worker shares runs with gateways through Redis and a shared store; the embedded store lives
    // inside one process, so a separate worker could never see the gateway's runs.
    if (checked.store.driver === 'embedded')
      throw new CliError('worker needs a shared store (store.driver postgres or mongodb); the embedded store belongs to the gateway process');
    if (checked.queue.driver !== 'bullmq') throw new CliError('worker needs queue.driver bullmq (with inline, the gateway runs its runs itself)');
  }
  // The queue's Redis first: a cheap check that spares opening the store for nothing.
  if (checked.queue.driver === 'bullmq') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { probeRedis } = require('./cli/probe-redis') as typeof import('./cli/probe-redis');
    await probeRedis(checked.queue.redisUrl);
  }
  const ctx = await openContext(argv, process.env, worker ? 'worker' : 'gateway').catch((err: unknown) => {
    if (err instanceof EmbeddedStoreBusy) throw new CliError(`${err.message}: is another gateway already running on it?`);
    throw err;
  });
  const { config, logger, store } = ctx;
  if (ctx.bootstrapKey) {
    process.stdout.write(
      `First start: created organization "default" with admin user "admin".\nAdmin API key (shown once, store it now): ${ctx.bootstrapKey}\n`,
    );
  }
  if (!worker && config.plugins['auth']?.enabled !== true) {
    logger.warn('the auth plugin is off: every call acts as an admin of the first organization', { reason: 'plugins.auth not enabled' });
  }
  let built: GatewayApp | undefined;
  try {
    built = await buildApp(config, { store, logger });
    // Fail now, in one line, rather than serve a gateway whose queue (or Redis) is unreachable.
    await checkDependencies(built, config.queue.redisUrl);
  } catch (err) {
    await closeQuietly(built);
    await ctx.close().catch(() => undefined);
    throw err;
  }
  const gateway = built;
  // The embedded store is this process's alone: admin commands reach it through a local socket.
  const control: ControlServer | null = config.store.driver === 'embedded' ? await startControlServer(controlSocketOf(config.store.path), store, logger) : null;
  let runtime: Runtime;
  let server: Server | null = null;
  if (worker) {
    runtime = await startWorkerRuntime(gateway.services);
    logger.info('worker started', { pid: process.pid, driver: config.queue.driver });
  } else {
    server = await new Promise<Server>((resolve, reject) => {
      const s = createServer(gateway.app);
      answerClientErrors(s, logger);
      s.listen(config.server.port, config.server.host);
      s.once('listening', () => resolve(s));
      s.once('error', reject);
    }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') throw new CliError(`port ${config.server.port} on ${config.server.host} is already in use`);
      throw err;
    });
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    runtime = await startServeRuntime(gateway.services);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.server.port;
    logger.info('listening', { host: config.server.host, port, pid: process.pid });
  }

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    const grace = setTimeout(() => server?.closeAllConnections(), config.server.shutdownGraceMs);
    grace.unref();
    // A dependency that stopped answering (Redis or a database gone) must not keep the process forever.
    const deadline = setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting', { signal, durationMs: config.server.shutdownGraceMs + 10_000 });
      process.exit(1);
    }, config.server.shutdownGraceMs + 10_000);
    deadline.unref();
    // Stop accepting; in-flight requests finish (bounded by the grace period); idle sockets close now.
    const closed = server ? new Promise<void>((resolve) => server!.close(() => resolve())) : Promise.resolve();
    server?.closeIdleConnections();
    // A keep-alive connection whose last request finishes now turns idle: close it then, not at the grace's end.
    const sweepIdle = setInterval(() => server?.closeIdleConnections(), 100);
    await closed;
    clearInterval(sweepIdle);
    clearTimeout(grace);
    try {
      await runtime.close();
      await control?.close();
      await gateway.close();
      await ctx.close();
    } catch (err) {
      logger.error('error during shutdown', errorFields(err));
      process.exitCode = 1;
    }
    logger.info('stopped', { signal });
    // Let winston flush, then exit even if a stray handle remains.
    setTimeout(() => process.exit(), 100).unref();
  };
  onStop = (signal) => void shutdown(signal);
  if (stopRequested) onStop(stopRequested);
}

/** Checks the readiness probes other than the store's (already open): the queue and Redis when used. */
async function checkDependencies(gateway: GatewayApp, redisUrl: string): Promise<void> {
  for (const [name, check] of Object.entries(gateway.services.readiness)) {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        check(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer within 5 s')), 5000);
        }),
      ]);
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      throw new CliError(`cannot reach Redis at ${redactUrl(redisUrl)} (${name} check): ${reason}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

async function closeQuietly(gateway: GatewayApp | undefined): Promise<void> {
  if (!gateway) return;
  // Closing a queue whose Redis is down can wait on reconnects: bounded.
  await Promise.race([gateway.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
}

/** Runs an admin operation on the store, or through the running gateway that holds the embedded store. */
async function admin(argv: string[], op: AdminOp): Promise<void> {
  let output;
  try {
    const ctx = await openContext(argv, process.env, 'cli');
    try {
      output = await runAdminOp(ctx.store, op);
    } finally {
      await ctx.close();
    }
  } catch (err) {
    if (!(err instanceof EmbeddedStoreBusy)) throw err;
    output = await callControlServer(controlSocketOf(err.storePath), op);
  }
  process.stdout.write(output.stdout);
  process.stderr.write(output.stderr);
}

/** Writes command output; a reader that went away (`agent-gateway openapi | head`) ends the command quietly. */
function quietOnClosedStdout(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    fail(err.message);
  });
}

const HELP = new Set(['help', '--help', '-h']);

async function main(argv: string[]): Promise<void> {
  if (argv.some((arg) => HELP.has(arg))) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [command = 'serve', sub] = positional(argv);
  if (command !== 'serve' && command !== 'worker') quietOnClosedStdout();
  switch (command) {
    case 'serve':
      return serve(argv, false);
    case 'worker':
      return serve(argv, true);
    case 'config': {
      if (sub !== 'check') throw new UsageError(`unknown config command "${sub ?? ''}"`);
      return checkConfig(argv);
    }
    case 'openapi': {
      process.stdout.write(await openapiText());
      return;
    }
    case 'keys': {
      if (sub === 'create') {
        const org = flag(argv, 'org');
        const user = flag(argv, 'user');
        if (!org || !user) throw new UsageError('keys create needs --org O --user U');
        return admin(argv, { cmd: 'keys.create', org, user, name: flag(argv, 'name') ?? 'cli' });
      }
      if (sub === 'revoke') {
        const id = positional(argv)[2];
        if (!id) throw new UsageError('keys revoke needs KEY_ID');
        return admin(argv, { cmd: 'keys.revoke', id });
      }
      if (sub === 'list') {
        const org = flag(argv, 'org');
        if (!org) throw new UsageError('keys list needs --org O');
        return admin(argv, { cmd: 'keys.list', org });
      }
      throw new UsageError(`unknown keys command "${sub ?? ''}"`);
    }
    case 'audit': {
      if (sub !== 'list') throw new UsageError(`unknown audit command "${sub ?? ''}"`);
      const org = flag(argv, 'org');
      if (!org) throw new UsageError('audit list needs --org O');
      const sinceFlag = flag(argv, 'since');
      const since = sinceFlag ? new Date(sinceFlag) : null;
      if (since && Number.isNaN(since.getTime())) throw new UsageError(`audit list: --since "${sinceFlag}" is not a date`);
      const limit = Number(flag(argv, 'limit') ?? '1000');
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`audit list: --limit must be a positive integer`);
      return admin(argv, { cmd: 'audit.list', org, since: since?.toISOString() ?? null, limit });
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** `config check`: every problem of the file at once, one per line with its path and its fix. */
async function checkConfig(argv: string[]): Promise<void> {
  const file = resolveConfigPath(argv, process.env);
  const shown = path.relative(process.cwd(), file) || file;
  let config;
  try {
    config = await loadConfig(file, process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`agent-gateway: ${shown}: ${count(err.problems.length, 'problem')}\n${err.problems.map((p) => `  ${p}\n`).join('')}`);
    process.exit(1);
  }
  process.stdout.write(
    `config ok: ${shown} (${count(config.organizations.length, 'organization')}, ${count(config.models.length, 'model')}: ${config.models.map((m) => m.id).join(', ') || 'none'}, ${count(config.agents.length, 'agent')})\n`,
  );
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`agent-gateway: ${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (err instanceof ConfigError) fail(`invalid configuration: ${err.message}`);
  if (err instanceof CliError) fail(err.message);
  fail(err instanceof Error ? err.message : String(err));
});
