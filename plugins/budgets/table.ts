// The budgets a model call draws on: its organization's and its user's (organizations[].budgets,
// users[].budgets) and its API key's (ApiKeyRecord.budgets). A key's budgets come with the principal
// (the auth plugin); outside a request (agent runs) the key is read from the store, kept for a while.
import type { OrganizationConfig } from '../../src/config/types';
import type { BudgetScope, BudgetSubject } from '../../src/model-call/budget-guard';
import type { Store } from '../../src/store/port';
import type { BudgetSpec } from '../../src/store/types';

/** One budget of a subject: whose it is and its terms. */
export interface AppliedBudget extends BudgetSpec {
  scope: BudgetScope;
  id: string;
}

const KEY_TTL_MS = 30_000;
/** Keys' budgets remembered at most (runs of many keys at once). */
const KEY_CACHE_MAX = 10_000;

export class BudgetTable {
  private readonly orgs = new Map<string, readonly BudgetSpec[]>();
  private readonly users = new Map<string, readonly BudgetSpec[]>();
  private readonly keys = new Map<string, { at: number; budgets: readonly BudgetSpec[] }>();

  constructor(
    organizations: readonly OrganizationConfig[],
    private readonly store: Pick<Store, 'keys'>,
  ) {
    for (const org of organizations) {
      if (org.budgets.length > 0) this.orgs.set(org.id, org.budgets);
      for (const user of org.users) if (user.budgets.length > 0) this.users.set(`${org.id}\u0000${user.id}`, user.budgets);
    }
  }

  /** True when no organization or user has a budget: only keys may (a key's budgets are read per subject). */
  get configured(): boolean {
    return this.orgs.size > 0 || this.users.size > 0;
  }

  async budgetsOf(subject: BudgetSubject): Promise<AppliedBudget[]> {
    const out: AppliedBudget[] = [];
    for (const spec of this.orgs.get(subject.orgId) ?? []) out.push({ ...spec, scope: 'organization', id: subject.orgId });
    if (subject.userId !== null) {
      for (const spec of this.users.get(`${subject.orgId}\u0000${subject.userId}`) ?? []) out.push({ ...spec, scope: 'user', id: subject.userId });
    }
    if (subject.keyId !== null) {
      const keyId = subject.keyId;
      for (const spec of subject.keyBudgets ?? (await this.keyBudgets(keyId))) out.push({ ...spec, scope: 'key', id: keyId });
    }
    return out;
  }

  private async keyBudgets(keyId: string): Promise<readonly BudgetSpec[]> {
    const now = Date.now();
    const cached = this.keys.get(keyId);
    if (cached && now - cached.at < KEY_TTL_MS) return cached.budgets;
    const key = await this.store.keys.get(keyId);
    const budgets = key?.budgets ?? [];
    if (this.keys.size >= KEY_CACHE_MAX) this.keys.clear();
    this.keys.set(keyId, { at: now, budgets });
    return budgets;
  }
}
