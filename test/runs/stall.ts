// A stalled event loop, on purpose: a synchronous busy-wait inside a hook of the run engine (the step
// prompt redactor), as a slow DLP pattern or any long synchronous task would stall it.
import { execFileSync } from 'node:child_process';
import { ROOT } from '../helpers/process';

/** Blocks this thread (timers, sockets, everything) for `ms`. */
export function busyWait(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spinning on purpose
  }
}

const LEASE_OWNER_SCRIPT = `
const pg = require('pg');
const [url, runId] = process.argv.slice(1);
const client = new pg.Client({ connectionString: url });
client.connect()
  .then(() => client.query('SELECT lease_owner FROM runs WHERE id = $1', [runId]))
  .then((r) => { process.stdout.write(String((r.rows[0] || {}).lease_owner || '')); return client.end(); })
  .catch(() => process.exit(1));`;

/**
 * Blocks this thread until the run's lease is held by someone other than `owner` (read from PostgreSQL
 * by a child process, since this thread's own I/O is stalled), or `ceilingMs` pass. True when it was.
 */
export function stallUntilTakenOver(databaseUrl: string, runId: string, owner: string, ceilingMs: number): boolean {
  const until = Date.now() + ceilingMs;
  while (Date.now() < until) {
    let holder = '';
    try {
      holder = execFileSync(process.execPath, ['-e', LEASE_OWNER_SCRIPT, databaseUrl, runId], { cwd: ROOT, encoding: 'utf8', timeout: 10_000 });
    } catch {
      // a failed probe: try again
    }
    if (holder && holder !== owner) return true;
    busyWait(200);
  }
  return false;
}
