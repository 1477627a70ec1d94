// Resolves API key hashes to principals: a CredentialResolver (cache, shared lookups, revocation poll)
// over store.keys. An expired key is refused like a revoked one; a valid one is cached no longer than it lasts.
import type { Logger } from 'winston';
import type { KeyRepository } from '../../src/store/port';
import type { Principal } from '../../src/store/types';
import { CredentialResolver, type CredentialResolution, type CredentialResolverOptions } from './credential-resolver';

async function lookupKey(keys: KeyRepository, hash: string, evaluationModel: string | undefined): Promise<CredentialResolution | null> {
  const resolved = await keys.resolve(hash);
  if (!resolved) return null;
  const principal: Principal = Object.freeze({
    orgId: resolved.key.orgId,
    userId: resolved.user.id,
    keyId: resolved.key.id,
    role: resolved.user.role,
    groups: Object.freeze([...resolved.groups]) as string[],
    models: resolved.key.models === null ? null : Object.freeze([...resolved.key.models]),
    // With an allow-list, the judge's model bounds which agents the key reaches (src/store/agent-models.ts).
    ...(resolved.key.models !== null && evaluationModel !== undefined ? { evaluationModel } : {}),
    // The key's token and cost budgets, for the budgets plugin (none: no lookup per call).
    keyBudgets: Object.freeze([...resolved.key.budgets]),
  });
  return { principal, validUntil: resolved.key.expiresAt ? Date.parse(resolved.key.expiresAt) : Infinity };
}

export class KeyResolver extends CredentialResolver {
  /** `evaluationModel`: the configured judge model (evaluation.model), when one is. */
  constructor(keys: KeyRepository, logger: Logger, options: CredentialResolverOptions, evaluationModel?: string) {
    super({ kind: 'key', lookup: (hash) => lookupKey(keys, hash, evaluationModel), revokedSince: (since) => keys.revokedSince(since) }, logger, options);
  }
}
