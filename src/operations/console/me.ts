import { callerOf } from '../../agents/access';
import type { Handler } from '../types';

/** GET /v1/me: the caller's user, organization and key (null when auth is off). */
export const getMe: Handler = async (ctx, { store }) => {
  const principal = callerOf(ctx);
  const [user, org, key] = await Promise.all([
    store.users.get(principal.userId),
    store.organizations.get(principal.orgId),
    principal.keyId ? store.keys.get(principal.keyId) : null,
  ]);
  return {
    status: 200,
    body: {
      // With auth off the caller is the anonymous admin, which has no user record.
      user: { id: principal.userId, name: user?.name ?? principal.userId, role: principal.role },
      organization: { id: principal.orgId, name: org?.name ?? principal.orgId },
      key: key ? { id: key.id, name: key.name, prefix: key.prefix, expiresAt: key.expiresAt } : null,
    },
  };
};
