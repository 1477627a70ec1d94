// One redactor per organization, compiled at boot from `organizations[].dlp`. An organization without
// a `dlp` block (including those known only to the store, such as the first start's `default`) has no
// policy: its text passes unchanged (the spec applies DLP "when policies are enabled").
import type { GatewayConfig } from '../../src/config/types';
import type { Redactor } from '../../src/pipeline/context';
import { compilePolicy } from './redactor';

export interface OrgRedactors {
  /** The organization's redactor, or null when it has no policy or its policy is off. */
  forOrg(orgId: string): Redactor | null;
}

export function buildOrgRedactors(config: GatewayConfig): OrgRedactors {
  const byOrg = new Map<string, Redactor>();
  for (const org of config.organizations) {
    const redactor = org.dlp ? compilePolicy(org.dlp) : null;
    if (redactor) byOrg.set(org.id, redactor);
  }
  return { forOrg: (orgId) => byOrg.get(orgId) ?? null };
}
