// Admin commands as data, so the CLI can run them on the store directly or, when a running gateway
// holds the embedded store, hand them to that gateway over its control socket (control-socket.ts).
import type { Store } from '../store/port';
import { CliError } from './args';
import { createKey, listKeys, revokeKey } from './keys';

export type AdminOp =
  | { cmd: 'keys.create'; org: string; user: string; name: string }
  | { cmd: 'keys.revoke'; id: string }
  | { cmd: 'keys.list'; org: string }
  | { cmd: 'audit.list'; org: string; since: string | null; limit: number };

export interface AdminOutput {
  stdout: string;
  stderr: string;
}

async function requireOrg(store: Store, command: string, orgId: string): Promise<void> {
  if (!(await store.organizations.get(orgId))) throw new CliError(`${command}: no organization "${orgId}"`);
}

export async function runAdminOp(store: Store, op: AdminOp): Promise<AdminOutput> {
  switch (op.cmd) {
    case 'keys.create': {
      const { id, key } = await createKey(store, op.org, op.user, op.name);
      return { stdout: `${key}\n`, stderr: `created key ${id} for ${op.user} in ${op.org}; the key is shown once\n` };
    }
    case 'keys.revoke':
      await revokeKey(store, op.id);
      return { stdout: `revoked ${op.id}\n`, stderr: '' };
    case 'keys.list':
      await requireOrg(store, 'keys list', op.org);
      return { stdout: `${(await listKeys(store, op.org)).join('\n')}\n`, stderr: '' };
    case 'audit.list': {
      await requireOrg(store, 'audit list', op.org);
      const lines: string[] = [];
      let after: { at: string; id: string } | null = null;
      while (lines.length < op.limit) {
        const size = Math.min(500, op.limit - lines.length);
        const page = await store.audit.list({ orgId: op.org, since: op.since, limit: size, after });
        for (const record of page) lines.push(JSON.stringify(record));
        const last = page[page.length - 1];
        if (!last || page.length < size) break;
        after = { at: last.at, id: last.id };
      }
      return { stdout: lines.map((l) => `${l}\n`).join(''), stderr: '' };
    }
    default:
      throw new CliError(`unknown admin operation`);
  }
}
