import type { OrganizationConfig } from '../../src/config/types';
import type { Principal } from '../../src/store/types';
import type { Budget } from '../../src/limits/sliding-window';

interface OrgLimits {
  readonly orgBudget: Budget | null;
  readonly perUser: number | null;
  /** Budget lists by user id, built on first use (bounded by the organization's users). */
  readonly byUser: Map<string, readonly Budget[]>;
}

/**
 * The budgets a caller draws on, from `organizations[].rateLimit`: the organization's and the user's.
 * Organizations without a configured limit (or known only to the store) are unlimited.
 */
export class BudgetTable {
  private readonly orgs = new Map<string, OrgLimits>();

  constructor(organizations: readonly OrganizationConfig[]) {
    for (const org of organizations) {
      const perOrg = org.rateLimit?.requestsPerMinute ?? null;
      const perUser = org.rateLimit?.perUserRequestsPerMinute ?? null;
      if (perOrg === null && perUser === null) continue;
      this.orgs.set(org.id, {
        orgBudget: perOrg === null ? null : { key: `o:${org.id}`, limit: perOrg },
        perUser,
        byUser: new Map(),
      });
    }
  }

  /** Budgets of this caller, organization first; empty when unlimited. */
  budgetsOf(principal: Principal): readonly Budget[] {
    const org = this.orgs.get(principal.orgId);
    if (!org) return [];
    let budgets = org.byUser.get(principal.userId);
    if (!budgets) {
      const list: Budget[] = [];
      if (org.orgBudget) list.push(org.orgBudget);
      if (org.perUser !== null) list.push({ key: `u:${principal.orgId}:${principal.userId}`, limit: org.perUser });
      budgets = list;
      org.byUser.set(principal.userId, budgets);
    }
    return budgets;
  }
}

/** Says which budget ran out, for the 429 message. */
export function describeBudget(budget: Budget, principal: Principal): string {
  return budget.key.startsWith('o:')
    ? `organization "${principal.orgId}" allows ${budget.limit} requests per minute`
    : `user "${principal.userId}" allows ${budget.limit} requests per minute`;
}
