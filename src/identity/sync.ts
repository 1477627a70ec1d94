// Loads organizations, users, groups and bootstrap keys from the config into the store (upsert), and on
// a first start with no key anywhere creates `default`/`admin` with one admin key printed once.
import type { Logger } from 'winston';
import type { GatewayConfig } from '../config/types';
import { generateApiKey, hashApiKey, keyDisplayPrefix, newKeyId } from '../security/keys';
import type { Store } from '../store/port';

export interface IdentitySyncResult {
  /** The admin key created on first start (print it once), else null. */
  bootstrapKey: string | null;
}

export interface IdentitySyncOptions {
  /**
   * Create the first-start admin key when no key exists (default true). Only a process that can show
   * it to the operator (serve) does: a key made by an admin command or a worker would never be seen.
   */
  bootstrap?: boolean;
}

export async function syncIdentity(
  config: GatewayConfig,
  store: Store,
  logger: Logger,
  now = new Date(),
  options: IdentitySyncOptions = {},
): Promise<IdentitySyncResult> {
  const at = now.toISOString();
  for (const org of config.organizations) {
    await store.organizations.upsert({
      id: org.id,
      name: org.name,
      models: org.models,
      rateLimit: org.rateLimit ?? null,
      dlp: org.dlp ?? null,
    });
    for (const user of org.users) {
      await store.users.upsert({ id: user.id, orgId: org.id, name: user.name, role: user.role });
      for (const key of user.keys) {
        await store.keys.create({
          id: newKeyId(),
          orgId: org.id,
          userId: user.id,
          name: 'config',
          hash: hashApiKey(key),
          prefix: keyDisplayPrefix(key),
          source: 'config',
          createdAt: at,
          lastUsedAt: null,
          revokedAt: null,
          expiresAt: null,
          models: null,
          budgets: [],
        });
      }
    }
    for (const group of org.groups) {
      await store.groups.upsert({ id: group.id, orgId: org.id, name: group.name ?? group.id, members: group.members });
    }
  }

  const configHasKeys = config.organizations.some((org) => org.users.some((u) => u.keys.length > 0));
  if (options.bootstrap === false || configHasKeys || (await store.keys.countActive()) > 0) return { bootstrapKey: null };

  // First start: nobody can call the API yet. Create default/admin and one key, shown once.
  await store.organizations.upsert({ id: 'default', name: 'Default organization', models: ['*'], rateLimit: null, dlp: null });
  await store.users.upsert({ id: 'admin', orgId: 'default', name: 'Administrator', role: 'admin' });
  const key = generateApiKey();
  await store.keys.create({
    id: newKeyId(),
    orgId: 'default',
    userId: 'admin',
    name: 'bootstrap',
    hash: hashApiKey(key),
    prefix: keyDisplayPrefix(key),
    source: 'bootstrap',
    createdAt: at,
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: null,
    models: null,
    budgets: [],
  });
  logger.info('first start: created organization default with admin user and one API key', { orgId: 'default', userId: 'admin' });
  return { bootstrapKey: key };
}
