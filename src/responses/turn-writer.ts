// Group commit of stored turns (a stored response's record at its start, its conversation items and
// terminal write at its end). Each is awaited by its handler (the record exists before the caller's
// first byte; the end is stored before the caller's last), but they share transactions: while fewer
// than `maxInFlight` commits run, one starts at the next turn of the event loop with everything
// queued by then; once that many are in flight, what arrives waits for one to end and goes in the
// next. An idle gateway pays one transaction per write (no added delay), a loaded one a transaction
// per window instead of one per response. A server database takes several commits at once (a few in
// flight keep latency down at low concurrency); the embedded one runs one transaction at a time.
//
// A commit that fails is retried write by write, so one bad write (a row the store refuses) fails only
// its own response, not every response of its window. A commit that fails because the store is away
// (it does not answer its ping: a database restart, a failover, the embedded database's process
// restarting) fails its beginnings at once (their callers have sent nothing yet and answer 500), and
// keeps its ends: their callers have been sent the whole response, so its final state is written once
// the store is back, retried with backoff for up to `endRetryMs` (the response's lease is held
// meanwhile), rather than left for the lapsed-lease sweeper to mark failed. Ends kept that way wait
// outside the commit slots, so that the writes of a store that came back are not queued behind them.
// A store that answers its ping may still not have answered the write: a statement that was never
// answered (a partition, a server gone without a reset) fails only after the store's time limit, by
// which time the store may be back. So an end fails only when the store refused it (TurnRepository.refused); any
// other failure keeps it like the store being away.
import type { Logger } from 'winston';
import type { TurnBegin, TurnEnd, TurnRepository } from '../store/port';

interface Pending<T, R> {
  op: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/** Writes per commit: bounds one statement's JSON parameter. */
const MAX_BATCH = 256;

export interface TurnWriterOptions {
  /** The store's health check (Store.ping): without it a failed commit is never taken for the store being away. */
  ping?: () => Promise<void>;
  /** How long an end is retried while the store is away (default 30 s: queue.leaseSeconds' default). */
  endRetryMs?: number;
  /** First delay between retries, doubled per failure up to 2 s (default 100 ms). */
  retryBaseMs?: number;
}

export class TurnWriter {
  private begins: Pending<TurnBegin, void>[] = [];
  private ends: Pending<TurnEnd, boolean>[] = [];
  private running = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private scheduled = false;

  /** Ends kept while the store is away, with when each gives up. */
  private stranded: { pending: Pending<TurnEnd, boolean>; until: number }[] = [];
  private strandedTimer: NodeJS.Timeout | null = null;
  private strandedDelayMs = 0;
  private strandedRetry: Promise<void> | null = null;
  private draining = false;

  constructor(
    private readonly turns: TurnRepository,
    private readonly logger: Logger,
    private readonly maxInFlight = 1,
    private readonly options: TurnWriterOptions = {},
  ) {}

  /** Stores the turn's beginning (its new conversation and its response record). */
  begin(op: TurnBegin): Promise<void> {
    return new Promise((resolve, reject) => {
      this.begins.push({ op, resolve, reject });
      this.schedule();
    });
  }

  /** Stores the turn's end; true when the terminal write applied (false: the response was already final). */
  end(op: TurnEnd): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.ends.push({ op, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything queued so far is written (shutdown). */
  async drain(): Promise<void> {
    while (this.running > 0 || this.scheduled || this.begins.length > 0 || this.ends.length > 0) {
      if (this.running === 0 && !this.scheduled) this.schedule();
      await (this.running > 0 ? Promise.race(this.inFlight) : new Promise((resolve) => setImmediate(resolve)));
    }
    // Ends kept for a store that is away get one last attempt each, now (no timer re-armed meanwhile).
    if (this.stranded.length > 0 || this.strandedRetry) {
      this.draining = true;
      try {
        if (this.strandedTimer) clearTimeout(this.strandedTimer);
        this.strandedTimer = null;
        await this.strandedRetry;
        while (this.stranded.length > 0) await this.retryStranded(true);
      } finally {
        this.draining = false;
      }
    }
  }

  private get queued(): boolean {
    return this.begins.length > 0 || this.ends.length > 0;
  }

  private schedule(): void {
    if (this.running >= this.maxInFlight || this.scheduled) return;
    this.scheduled = true;
    // The next turn of the event loop: writes queued in this one join the same commit.
    setImmediate(() => {
      this.scheduled = false;
      if (!this.queued) return;
      this.running++;
      const commit: Promise<void> = this.run().finally(() => {
        this.running--;
        this.inFlight.delete(commit);
        if (this.queued) this.schedule();
      });
      this.inFlight.add(commit);
      if (this.queued) this.schedule();
    });
  }

  private async run(): Promise<void> {
    const begins = this.begins.splice(0, MAX_BATCH);
    const ends = this.ends.splice(0, Math.max(0, MAX_BATCH - begins.length));
    try {
      const { finished } = await this.turns.commit(
        begins.map((p) => p.op),
        ends.map((p) => p.op),
      );
      const applied = new Set(finished);
      for (const p of begins) p.resolve();
      for (const p of ends) p.resolve(applied.has(p.op.responseId));
      return;
    } catch (err) {
      if (ends.length > 0 && !(await this.storeAnswers())) {
        for (const p of begins) p.reject(err);
        this.strand(ends);
        return;
      }
      if (begins.length + ends.length === 1) {
        begins[0]?.reject(err);
        if (ends[0]) this.failOrKeep(ends[0], err);
        return;
      }
      this.logger.warn('stored turns: a group commit failed; writing them one by one', {
        component: 'response-turns',
        count: begins.length + ends.length,
        errorName: err instanceof Error ? err.name : 'unknown',
      });
    }
    for (const p of begins) {
      try {
        await this.turns.commit([p.op], []);
        p.resolve();
      } catch (err) {
        p.reject(err);
      }
    }
    await this.endOneByOne(ends);
  }

  /**
   * Each end in a commit of its own: one the store refuses fails alone; one that failed otherwise is
   * kept (`last`: fails, drain's final attempt), until the time it was first kept if it was.
   */
  private async endOneByOne(ends: readonly Pending<TurnEnd, boolean>[], last = false, until?: ReadonlyMap<Pending<TurnEnd, boolean>, number>): Promise<void> {
    for (const p of ends) {
      try {
        const { finished } = await this.turns.commit([], [p.op]);
        p.resolve(finished.includes(p.op.responseId));
      } catch (err) {
        if (last) p.reject(err);
        else this.failOrKeep(p, err, until?.get(p));
      }
    }
  }

  /** An end whose write failed while the store answers: failed when the store refused it, else kept. */
  private failOrKeep(p: Pending<TurnEnd, boolean>, err: unknown, until?: number): void {
    if (this.turns.refused(err)) p.reject(err);
    else if (until !== undefined && until <= Date.now()) this.giveUp([p], err);
    else this.strand([p], until);
  }

  /** Ends kept past endRetryMs: failed, and said so (the lapsed-lease sweeper will mark their responses failed). */
  private giveUp(ends: readonly Pending<TurnEnd, boolean>[], err: unknown): void {
    if (ends.length === 0) return;
    for (const p of ends) p.reject(err);
    this.logger.error('stored turns: the store did not take these ends in time; given up (their responses will be marked failed)', {
      component: 'response-turns',
      count: ends.length,
    });
  }

  /** True when the store answers its ping (or there is no ping to ask): a failed commit is then retried write by write, not kept whole. */
  private async storeAnswers(): Promise<boolean> {
    if (!this.options.ping) return true;
    return this.options.ping().then(
      () => true,
      () => false,
    );
  }

  private get retryBaseMs(): number {
    return this.options.retryBaseMs ?? 100;
  }

  private strand(ends: Pending<TurnEnd, boolean>[], keptUntil?: number): void {
    const until = keptUntil ?? Date.now() + (this.options.endRetryMs ?? 30_000);
    if (this.stranded.length === 0 && !this.strandedRetry) {
      this.strandedDelayMs = this.retryBaseMs;
      this.logger.warn('stored turns: the store did not take the ends of responses already sent; retried until it does', {
        component: 'response-turns',
        count: ends.length,
      });
    }
    for (const pending of ends) this.stranded.push({ pending, until });
    this.armStranded();
  }

  private armStranded(): void {
    if (this.strandedTimer || this.strandedRetry || this.draining || this.stranded.length === 0) return;
    const delay = Math.round(this.strandedDelayMs * (0.5 + Math.random() / 2));
    this.strandedTimer = setTimeout(() => {
      this.strandedTimer = null;
      this.strandedRetry = this.retryStranded(false).finally(() => {
        this.strandedRetry = null;
        this.armStranded();
      });
    }, delay);
  }

  /** One attempt at every kept end: all in one commit, or one by one once the store answers (a refusal fails only its own). */
  private async retryStranded(last: boolean): Promise<void> {
    const kept = this.stranded.splice(0, MAX_BATCH);
    if (kept.length === 0) return;
    try {
      const { finished } = await this.turns.commit(
        [],
        kept.map((k) => k.pending.op),
      );
      const applied = new Set(finished);
      for (const k of kept) k.pending.resolve(applied.has(k.pending.op.responseId));
      if (this.stranded.length === 0) this.logger.info('stored turns: the store is back; kept ends written', { component: 'response-turns' });
      this.strandedDelayMs = this.retryBaseMs;
      return;
    } catch (err) {
      if (last || (await this.storeAnswers())) {
        await this.endOneByOne(
          kept.map((k) => k.pending),
          last,
          new Map(kept.map((k) => [k.pending, k.until])),
        );
        return;
      }
      const now = Date.now();
      this.giveUp(
        kept.filter((k) => k.until <= now).map((k) => k.pending),
        err,
      );
      this.stranded.unshift(...kept.filter((k) => k.until > now));
      this.strandedDelayMs = Math.min(2000, this.strandedDelayMs * 2);
    }
  }
}
