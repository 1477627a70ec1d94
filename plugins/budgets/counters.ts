// Where budget use is counted. With queue.driver bullmq: Redis, one hash per budget holder and period
// ({t: tokens, c: cost in nano-USD}, HINCRBY, expiring a day after the period), shared by every gateway
// and worker process. Otherwise: the store, which holds every usage record (the sum of a period's
// records, read again at most every refreshMs; calls made here since are added meanwhile).
import type { Redis } from 'ioredis';
import type { BudgetScope } from '../../src/model-call/budget-guard';
import type { Store } from '../../src/store/port';

/** A budget holder's count for one period. */
export interface Slot {
  scope: BudgetScope;
  orgId: string;
  /** The organization, user or key id. */
  id: string;
  /** Period name (periods.ts) and its bounds. */
  label: string;
  start: Date;
  end: Date;
}

export interface Used {
  tokens: number;
  /** USD. */
  cost: number;
}

export interface BudgetCounter {
  read(slots: readonly Slot[]): Promise<Used[]>;
  /** Adds a call's use to every slot; returns the counts after it (null: not known without a read). */
  add(slots: readonly Slot[], used: Used): Promise<Used[] | null>;
  /** True for the one caller that first reports `mark` for its period (the 80% warning, logged once). */
  firstMark(mark: string, slot: Slot): Promise<boolean>;
}

const NANO = 1e9;
/** Counts outlive their period by a day (a late read of the period just ended still finds them). */
const GRACE_MS = 86_400_000;

export const slotKey = (slot: Slot): string => `${slot.scope[0]}:${slot.orgId}:${slot.id}:${slot.label}`;

export class RedisBudgetCounter implements BudgetCounter {
  constructor(
    private readonly client: () => Redis,
    /** e.g. `agw:budget:` (queue.prefix). */
    private readonly prefix: string,
  ) {}

  async read(slots: readonly Slot[]): Promise<Used[]> {
    const batch = this.client().pipeline();
    for (const slot of slots) batch.hmget(this.prefix + slotKey(slot), 't', 'c');
    const replies = (await batch.exec()) ?? [];
    return replies.map(([err, value]) => {
      if (err) throw err;
      const [t, c] = value as [string | null, string | null];
      return { tokens: Number(t ?? 0), cost: Number(c ?? 0) / NANO };
    });
  }

  async add(slots: readonly Slot[], used: Used): Promise<Used[]> {
    const nano = Math.round(used.cost * NANO);
    const batch = this.client().multi();
    for (const slot of slots) {
      const key = this.prefix + slotKey(slot);
      batch
        .hincrby(key, 't', used.tokens)
        .hincrby(key, 'c', nano)
        .pexpireat(key, slot.end.getTime() + GRACE_MS);
    }
    const replies = (await batch.exec()) ?? [];
    const out: Used[] = [];
    for (let i = 0; i < slots.length; i += 1) {
      const [tErr, t] = replies[i * 3] ?? [null, 0];
      const [cErr, c] = replies[i * 3 + 1] ?? [null, 0];
      if (tErr || cErr) throw tErr ?? cErr;
      out.push({ tokens: Number(t), cost: Number(c) / NANO });
    }
    return out;
  }

  async firstMark(mark: string, slot: Slot): Promise<boolean> {
    const reply = await this.client().set(`${this.prefix}${slotKey(slot)}:${mark}`, '1', 'PXAT', slot.end.getTime() + GRACE_MS, 'NX');
    return reply === 'OK';
  }
}

interface Entry {
  readAt: number;
  used: Used;
}

/** Entries kept at most (a busy organization's users, keys and periods). */
const STORE_ENTRIES_MAX = 100_000;

export class StoreBudgetCounter implements BudgetCounter {
  private readonly entries = new Map<string, Entry>();
  private readonly marks = new Set<string>();

  constructor(
    private readonly store: Pick<Store, 'usage'>,
    private readonly refreshMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {}

  async read(slots: readonly Slot[]): Promise<Used[]> {
    const now = this.nowMs();
    const stale = slots.filter((slot) => {
      const entry = this.entries.get(slotKey(slot));
      return !entry || now - entry.readAt >= this.refreshMs;
    });
    // One store query per period start: it sums the organization's, the user's and the key's use at once.
    const byStart = new Map<number, Slot[]>();
    for (const slot of stale) byStart.set(slot.start.getTime(), [...(byStart.get(slot.start.getTime()) ?? []), slot]);
    for (const [start, group] of byStart) {
      const orgId = group[0]!.orgId;
      const userId = group.find((s) => s.scope === 'user')?.id ?? null;
      const keyId = group.find((s) => s.scope === 'key')?.id ?? null;
      const spent = await this.store.usage.spent(orgId, userId, keyId, new Date(start).toISOString());
      if (this.entries.size >= STORE_ENTRIES_MAX) this.entries.clear();
      for (const slot of group) {
        const used = slot.scope === 'organization' ? spent.organization : slot.scope === 'user' ? spent.user : spent.key;
        this.entries.set(slotKey(slot), { readAt: now, used: { ...used } });
      }
    }
    return slots.map((slot) => ({ ...(this.entries.get(slotKey(slot))?.used ?? { tokens: 0, cost: 0 }) }));
  }

  add(slots: readonly Slot[], used: Used): Promise<null> {
    // Until the next read, the calls counted here stand in for their records (the audit trail writes
    // them in batches, a moment later).
    for (const slot of slots) {
      const entry = this.entries.get(slotKey(slot));
      if (entry) {
        entry.used.tokens += used.tokens;
        entry.used.cost += used.cost;
      }
    }
    return Promise.resolve(null);
  }

  firstMark(mark: string, slot: Slot): Promise<boolean> {
    // Once per process and period: without Redis there is no cheap place all processes agree on.
    const key = `${slotKey(slot)}:${mark}`;
    if (this.marks.has(key)) return Promise.resolve(false);
    if (this.marks.size >= STORE_ENTRIES_MAX) this.marks.clear();
    this.marks.add(key);
    return Promise.resolve(true);
  }
}
