// The response events waiting for the store, oldest first: one array with a moving head (no shift per
// write), the entries of the write in flight kept in place until it ends. Entries a response's end took
// (stored with it) are marked in place and dropped once they are half of what the array holds: a write
// only advances the head past them batch by batch, and on a slow store (the embedded database under
// stored streams at c = 64) taken entries, each holding its event's text, piled up faster than writes
// passed them: 105,000 entries (46 MB) held with none of them waiting to be written.
import type { NewResponseEvent } from '../store/types';

/**
 * An event waiting for the store: its data as JSON text. One string per event, not the event's object
 * graph, is what lives on while its batch fills (through scavenges, into the old generation).
 */
export interface QueuedEvent {
  responseId: string;
  sequenceNumber: number;
  event: string;
  json: string;
  /** Taken out by takeResponse (stored by someone else): left in place, skipped, until the head passes it. */
  taken?: true;
}

/** Taken entries behind the write in flight that may wait to be dropped (a small queue is not rebuilt per take). */
const COMPACT_MIN = 32;

export class EventQueue {
  private entries: QueuedEvent[] = [];
  private head = 0;
  /** Entries from the head in the write in flight (taken ones among them included). */
  private inFlight = 0;
  /** Of those, taken entries (skipped by the write). */
  private inFlightTaken = 0;
  /** Taken entries from the head on (in flight or not). */
  private taken = 0;

  /** Entries the queue holds: its events, and taken ones not dropped yet (bounded: see takeResponse). */
  get held(): number {
    return this.entries.length - this.head;
  }

  /** Events queued, those in flight included. */
  get length(): number {
    return this.entries.length - this.head - this.taken;
  }

  /** Events queued behind the write in flight. */
  get waiting(): number {
    return this.length - (this.inFlight - this.inFlightTaken);
  }

  push(entry: QueuedEvent): void {
    this.entries.push(entry);
  }

  /** The oldest `max` entries, now in flight: their events (taken ones skipped). */
  takeBatch(max: number): QueuedEvent[] {
    const end = Math.min(this.head + max, this.entries.length);
    this.inFlight = end - this.head;
    this.inFlightTaken = 0;
    const batch: QueuedEvent[] = [];
    for (let i = this.head; i < end; i++) {
      const entry = this.entries[i]!;
      if (entry.taken) this.inFlightTaken++;
      else batch.push(entry);
    }
    return batch;
  }

  /** Whether an event of the response is in the write in flight. */
  inFlightHas(responseId: string): boolean {
    for (let i = this.head, end = this.head + this.inFlight; i < end; i++) {
      const entry = this.entries[i]!;
      if (entry.responseId === responseId && !entry.taken) return true;
    }
    return false;
  }

  /**
   * Takes the response's events queued behind the write in flight out of the queue, in order (the
   * caller stores them); null, taking nothing, when there are more than `max`. Entries stay in place,
   * marked: no array is rebuilt per call.
   */
  takeResponse(responseId: string, max: number): QueuedEvent[] | null {
    const out: QueuedEvent[] = [];
    for (let i = this.head + this.inFlight; i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      if (entry.responseId === responseId && !entry.taken) {
        if (out.length === max) return null;
        out.push(entry);
      }
    }
    for (const entry of out) entry.taken = true;
    this.taken += out.length;
    const takenBehind = this.taken - this.inFlightTaken;
    // Drops the taken entries behind the write in flight (no write will store them) once they are half
    // of what the queue holds: each rebuild drops at least half of what it copies, a constant cost per
    // taken entry.
    if (takenBehind >= COMPACT_MIN && takenBehind * 2 >= this.held) this.keepBehindWrite((e) => !e.taken);
    return out;
  }

  /**
   * The queue rebuilt from its head: the write in flight as it is (settle() and a retry count its entries
   * from the head), then the entries behind it that `keep` accepts. Returns how many events (not taken
   * ones) it dropped.
   */
  private keepBehindWrite(keep: (entry: QueuedEvent) => boolean): number {
    const from = this.head + this.inFlight;
    const kept = this.entries.slice(this.head, from);
    let dropped = 0;
    for (let i = from; i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      if (keep(entry)) kept.push(entry);
      else if (entry.taken) this.taken--;
      else dropped++;
    }
    this.entries = kept;
    this.head = 0;
    return dropped;
  }

  /** The write in flight ended: its events leave the queue but `retry`, which stay at its head. */
  settle(retry: readonly QueuedEvent[] = []): void {
    if (retry.length === 0) this.head += this.inFlight;
    else this.entries.splice(this.head, this.inFlight, ...retry);
    this.taken -= this.inFlightTaken;
    this.inFlight = 0;
    this.inFlightTaken = 0;
    // Written entries are dropped from the front once they are the larger part of the array.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** The write in flight failed: its events stay, in order, for the next attempt. */
  release(): void {
    this.inFlight = 0;
    this.inFlightTaken = 0;
  }

  /** Removes the response's events behind the write in flight; returns how many. */
  removeResponse(responseId: string): number {
    return this.keepBehindWrite((e) => e.responseId !== responseId);
  }

  /** The responses with events queued. */
  responseIds(): Set<string> {
    const ids = new Set<string>();
    for (let i = this.head; i < this.entries.length; i++) if (!this.entries[i]!.taken) ids.add(this.entries[i]!.responseId);
    return ids;
  }
}

/** Store records of queued events; one timestamp per write (the log's time, not each token's). */
export function eventRecords(entries: readonly QueuedEvent[]): NewResponseEvent[] {
  const createdAt = new Date().toISOString();
  return entries.map(({ responseId, sequenceNumber, event, json }) => ({ responseId, sequenceNumber, event, json, createdAt }));
}
