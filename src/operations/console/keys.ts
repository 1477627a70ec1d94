// API key management (/v1/keys). A key never has more rights than its user: it acts as that user, its
// models are a subset of the organization's (and of the calling key's, when that one is restricted), a
// member manages only their own keys, and keys are stored as SHA-256 digests (src/security/keys.ts,
// like the CLI's `keys create`), the key itself shown once in the 201.
import { callerOf } from '../../agents/access';
import { GatewayError } from '../../http/errors';
import { modelsForKey } from '../../providers/key-models';
import { announceKeyRevoked } from '../../security/key-revocations';
import { generateApiKey, hashApiKey, keyDisplayPrefix, newKeyId } from '../../security/keys';
import type { ApiKeyRecord, BudgetSpec } from '../../store/types';
import type { Handler } from '../types';

/** One page: more keys than this per organization is not a console's use. */
const MAX_KEYS = 1000;

export function presentKey(key: ApiKeyRecord) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    userId: key.userId,
    source: key.source,
    createdAt: key.createdAt,
    expiresAt: key.expiresAt,
    lastUsedAt: key.lastUsedAt,
    revokedAt: key.revokedAt,
    models: key.models,
    budgets: key.budgets,
  };
}

/** GET /v1/keys: the caller's keys, or (admins) the organization's. */
export const listKeys: Handler = async (ctx, { store }) => {
  const principal = callerOf(ctx);
  const organization = ctx.query['scope'] === 'organization';
  if (organization && principal.role !== 'admin') {
    throw new GatewayError('forbidden', "Only organization admins may list the organization's keys.");
  }
  const keys = await store.keys.list(
    { orgId: principal.orgId, userId: organization ? null : principal.userId, includeRevoked: ctx.query['includeRevoked'] === true },
    MAX_KEYS,
  );
  return { status: 200, body: { items: keys.map(presentKey), nextCursor: null } };
};

interface CreateKeyBody {
  name: string;
  expiresAt?: string;
  models?: string[];
  budgets?: BudgetSpec[];
  userId?: string;
}

/** POST /v1/keys: a new key, shown once. */
export const createKey: Handler = async (ctx, { store, models, clock }) => {
  const principal = callerOf(ctx);
  const body = ctx.body as CreateKeyBody;
  const now = clock.now();

  const userId = body.userId ?? principal.userId;
  if (userId !== principal.userId && principal.role !== 'admin') {
    throw new GatewayError('forbidden', 'Only organization admins may create keys for another user.');
  }
  const user = await store.users.get(userId);
  if (!user || user.orgId !== principal.orgId) {
    throw new GatewayError('bad_request', `Invalid request: 'userId' names no user of the organization.`, { param: 'userId' });
  }

  let expiresAt: string | null = null;
  if (body.expiresAt !== undefined) {
    const ms = Date.parse(body.expiresAt);
    if (Number.isNaN(ms) || ms <= now.getTime()) {
      throw new GatewayError('bad_request', "Invalid request: 'expiresAt' must be a date-time in the future.", { param: 'expiresAt' });
    }
    expiresAt = new Date(ms).toISOString();
  }

  // The calling key's own allow-list bounds the new key's: a restricted key cannot mint a wider one.
  const allowed = new Set(modelsForKey(models, principal.orgId, principal.models).map((m) => m.id));
  let keyModels: string[] | null = principal.models ? [...principal.models] : null;
  if (body.models !== undefined) {
    const outside = body.models.find((id) => !allowed.has(id));
    if (outside !== undefined) {
      throw new GatewayError('bad_request', `Invalid request: model '${outside}' is not available to the organization.`, { param: 'models' });
    }
    keyModels = [...body.models];
  }

  const key = generateApiKey();
  const record: ApiKeyRecord = {
    id: newKeyId(),
    orgId: principal.orgId,
    userId: user.id,
    name: body.name,
    hash: hashApiKey(key),
    prefix: keyDisplayPrefix(key),
    source: 'api',
    createdAt: now.toISOString(),
    lastUsedAt: null,
    revokedAt: null,
    expiresAt,
    models: keyModels,
    budgets: (body.budgets ?? []).map((b) => ({ metric: b.metric, period: b.period, limit: b.limit })),
  };
  if (!(await store.keys.create(record))) throw new Error('a freshly generated key collided with a stored one');
  ctx.resourceIds['keyId'] = record.id;
  return { status: 201, body: { ...presentKey(record), key } };
};

/** DELETE /v1/keys/{keyId}: revokes a key the caller may manage (a member: their own; an admin: the organization's). */
export const revokeKey: Handler = async (ctx, { store, clock }) => {
  const principal = callerOf(ctx);
  const keyId = ctx.params['keyId'] ?? '';
  const notFound = new GatewayError('not_found', `Key ${keyId} not found.`);
  const key = await store.keys.get(keyId);
  if (!key || key.orgId !== principal.orgId || (principal.role !== 'admin' && key.userId !== principal.userId) || key.revokedAt !== null) throw notFound;
  const revokedAt = clock.now().toISOString();
  if (!(await store.keys.revoke(key.id, revokedAt))) throw notFound;
  // This process's auth cache forgets it now; the others at their next revocation poll.
  announceKeyRevoked(store.keys, key.id);
  return { status: 200, body: presentKey({ ...key, revokedAt }) };
};
