// A local control channel for the embedded store: the gateway that holds it listens on a Unix socket
// in the store directory (mode 0600: whoever may read the data directory may administer it) and runs
// admin operations sent by the CLI. One JSON line in, one JSON line out.
import { chmod, unlink } from 'node:fs/promises';
import net from 'node:net';
import type { Logger } from 'winston';
import { errorFields } from '../log/logger';
import type { Store } from '../store/port';
import { runAdminOp, type AdminOp, type AdminOutput } from './admin-ops';
import { CliError } from './args';

const MAX_REQUEST_BYTES = 64 * 1024;

export interface ControlServer {
  close(): Promise<void>;
}

export async function startControlServer(socketPath: string, store: Store, logger: Logger): Promise<ControlServer> {
  // Only the lock holder gets here, so a socket file left by a dead holder is stale.
  await unlink(socketPath).catch(() => undefined);
  const server = net.createServer((socket) => {
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      if (buffered.length > MAX_REQUEST_BYTES) return socket.destroy();
      const end = buffered.indexOf('\n');
      if (end < 0) return;
      const line = buffered.slice(0, end);
      socket.removeAllListeners('data');
      void (async () => {
        let reply: { ok: true; output: AdminOutput } | { ok: false; error: string };
        try {
          reply = { ok: true, output: await runAdminOp(store, JSON.parse(line) as AdminOp) };
        } catch (err) {
          if (!(err instanceof CliError)) logger.error('admin operation failed', errorFields(err));
          reply = { ok: false, error: err instanceof Error ? err.message : String(err) };
        }
        socket.end(`${JSON.stringify(reply)}\n`);
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        void unlink(socketPath).catch(() => undefined);
      }),
  };
}

/** Sends one operation to the gateway holding the store; throws CliError with the gateway's message on failure. */
export async function callControlServer(socketPath: string, op: AdminOp, timeoutMs = 30_000): Promise<AdminOutput> {
  return new Promise<AdminOutput>((resolve, reject) => {
    const socket = net.connect(socketPath);
    let buffered = '';
    socket.setEncoding('utf8');
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new CliError('the running gateway did not answer the admin command in time'));
    });
    socket.on('connect', () => socket.write(`${JSON.stringify(op)}\n`));
    socket.on('data', (chunk: string) => (buffered += chunk));
    socket.on('error', (err: NodeJS.ErrnoException) =>
      reject(new CliError(`cannot reach the running gateway's control socket ${socketPath}: ${err.code ?? err.message}`)),
    );
    socket.on('end', () => {
      try {
        const reply = JSON.parse(buffered) as { ok: true; output: AdminOutput } | { ok: false; error: string };
        if (reply.ok) resolve(reply.output);
        else reject(new CliError(reply.error));
      } catch {
        reject(new CliError('the running gateway sent an unreadable answer to the admin command'));
      }
    });
  });
}
