import { callerOf } from '../../agents/access';
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';

/** GET /v1/admin/dlp: the organization's DLP policy as configured, read-only; org admins only. */
export const getDlpPolicy: Handler = async (ctx, { store, pipeline }) => {
  const principal = callerOf(ctx);
  if (principal.role !== 'admin') throw new GatewayError('forbidden', "Only organization admins may read the organization's DLP policy.");
  const policy = (await store.organizations.get(principal.orgId))?.dlp ?? null;
  return {
    status: 200,
    body: {
      configured: policy !== null,
      // In force only when the policy is enabled and the dlp plugin runs.
      enabled: policy !== null && policy.enabled && pipeline.has('dlp'),
      detectors: policy?.detectors ?? [],
      custom: (policy?.custom ?? []).map((c) => ({ name: c.name, pattern: c.pattern })),
    },
  };
};
