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
// its own response, not every response of its window.
import type { Logger } from 'winston';
import type { TurnBegin, TurnEnd, TurnRepository } from '../store/port';

interface Pending<T, R> {
  op: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/** Writes per commit: bounds one statement's JSON parameter. */
const MAX_BATCH = 256;

export class TurnWriter {
  private begins: Pending<TurnBegin, void>[] = [];
  private ends: Pending<TurnEnd, boolean>[] = [];
  private running = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private scheduled = false;

  constructor(
    private readonly turns: TurnRepository,
    private readonly logger: Logger,
    private readonly maxInFlight = 1,
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
      if (begins.length + ends.length === 1) {
        begins[0]?.reject(err);
        ends[0]?.reject(err);
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
    for (const p of ends) {
      try {
        const { finished } = await this.turns.commit([], [p.op]);
        p.resolve(finished.includes(p.op.responseId));
      } catch (err) {
        p.reject(err);
      }
    }
  }
}
