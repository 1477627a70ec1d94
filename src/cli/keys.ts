import { generateApiKey, hashApiKey, keyDisplayPrefix, newKeyId } from '../security/keys';
import type { Store } from '../store/port';
import { CliError } from './args';

export async function createKey(store: Store, orgId: string, userId: string, name: string, now = new Date()): Promise<{ id: string; key: string }> {
  if (!(await store.organizations.get(orgId))) throw new CliError(`keys create: no organization "${orgId}"`);
  const user = await store.users.get(userId);
  if (!user || user.orgId !== orgId) throw new CliError(`keys create: no user "${userId}" in organization "${orgId}"`);
  const key = generateApiKey();
  const id = newKeyId();
  await store.keys.create({
    id,
    orgId,
    userId,
    name,
    hash: hashApiKey(key),
    prefix: keyDisplayPrefix(key),
    source: 'cli',
    createdAt: now.toISOString(),
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: null,
    models: null,
    budgets: [],
  });
  return { id, key };
}

export async function revokeKey(store: Store, id: string, now = new Date()): Promise<void> {
  if (!(await store.keys.revoke(id, now.toISOString()))) throw new CliError(`keys revoke: no active key with id "${id}"`);
}

export async function listKeys(store: Store, orgId: string): Promise<string[]> {
  const keys = await store.keys.listByOrg(orgId);
  const rows = keys.map((k) => [k.id, k.name, k.userId, k.prefix + '…', k.createdAt, k.lastUsedAt ?? '-', k.revokedAt ? `revoked ${k.revokedAt}` : 'active']);
  const header = ['ID', 'NAME', 'USER', 'PREFIX', 'CREATED', 'LAST USED', 'STATUS'];
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all.map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}
