// One redactor per organization, compiled at boot from `organizations[].dlp`. Organizations without a
// `dlp` block (including those known only to the store, such as the first start's `default`) get the
// default policy: with the plugin on, DLP is on unless an organization turns it off.
import type { GatewayConfig } from '../../src/config/types';
import type { Redactor } from '../../src/pipeline/context';
import { compilePolicy, DEFAULT_POLICY } from './redactor';

export interface OrgRedactors {
  /** The organization's redactor, or null when its policy is off. */
  forOrg(orgId: string): Redactor | null;
}

export function buildOrgRedactors(config: GatewayConfig): OrgRedactors {
  const byOrg = new Map<string, Redactor | null>();
  for (const org of config.organizations) byOrg.set(org.id, compilePolicy(org.dlp ?? DEFAULT_POLICY));
  const fallback = compilePolicy(DEFAULT_POLICY);
  return {
    forOrg: (orgId) => {
      const redactor = byOrg.get(orgId);
      return redactor === undefined ? fallback : redactor;
    },
  };
}
