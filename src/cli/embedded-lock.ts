// The embedded store (PGlite) is a database inside one process: two processes opening the same
// directory would corrupt it. A pid file in the store directory makes that impossible, and tells the
// admin CLI that a gateway holds the store so it must go through that gateway's control socket.
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface EmbeddedLock {
  release(): Promise<void>;
}

export type LockAttempt = { acquired: true; lock: EmbeddedLock } | { acquired: false; holderPid: number };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockFileOf(storePath: string): string {
  return path.join(path.resolve(storePath), 'gateway.pid');
}

/** Unix socket paths are limited to ~107 bytes: long store paths get a socket named after their hash. */
export function controlSocketOf(storePath: string): string {
  const inStore = path.join(path.resolve(storePath), 'admin.sock');
  if (Buffer.byteLength(inStore) <= 100) return inStore;
  const digest = createHash('sha256').update(path.resolve(storePath)).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `agent-gateway-${digest}.sock`);
}

export async function tryLockEmbedded(storePath: string): Promise<LockAttempt> {
  await mkdir(path.resolve(storePath), { recursive: true, mode: 0o700 });
  const file = lockFileOf(storePath);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return {
        acquired: true,
        lock: {
          async release() {
            const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
            if (holder === process.pid) await unlink(file).catch(() => undefined);
          },
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holderPid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(holderPid) && holderPid > 0 && alive(holderPid)) return { acquired: false, holderPid };
      // Left behind by a process that died (SIGKILL, power loss): take it over.
      await unlink(file).catch(() => undefined);
    }
  }
  throw new Error(`cannot lock the embedded store at ${storePath}`);
}
