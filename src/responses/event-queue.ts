// The response events waiting for the store, oldest first: one array with a moving head (no shift per
// write), the entries of the write in flight kept in place until it ends.
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
}

export class EventQueue {
  private entries: QueuedEvent[] = [];
  private head = 0;
  /** Entries from the head in the write in flight. */
  private inFlight = 0;

  /** Events queued, those in flight included. */
  get length(): number {
    return this.entries.length - this.head;
  }

  /** Events queued behind the write in flight. */
  get waiting(): number {
    return this.length - this.inFlight;
  }

  push(entry: QueuedEvent): void {
    this.entries.push(entry);
  }

  /** The oldest `max` events, now in flight. */
  takeBatch(max: number): QueuedEvent[] {
    this.inFlight = Math.min(max, this.length);
    return this.entries.slice(this.head, this.head + this.inFlight);
  }

  /** The write in flight ended: its events leave the queue but `retry`, which stay at its head. */
  settle(retry: readonly QueuedEvent[] = []): void {
    if (retry.length === 0) this.head += this.inFlight;
    else this.entries.splice(this.head, this.inFlight, ...retry);
    this.inFlight = 0;
    // Written entries are dropped from the front once they are the larger part of the array.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** The write in flight failed: its events stay, in order, for the next attempt. */
  release(): void {
    this.inFlight = 0;
  }

  /** Removes the response's events behind the write in flight; returns how many. */
  removeResponse(responseId: string): number {
    const from = this.head + this.inFlight;
    let removed = 0;
    const kept = this.entries.slice(from).filter((e) => {
      if (e.responseId !== responseId) return true;
      removed++;
      return false;
    });
    if (removed > 0) this.entries.splice(from, this.entries.length - from, ...kept);
    return removed;
  }

  /** The responses with events queued. */
  responseIds(): Set<string> {
    return new Set(this.entries.slice(this.head).map((e) => e.responseId));
  }
}

/** Store records of queued events; one timestamp per write (the log's time, not each token's). */
export function eventRecords(entries: readonly QueuedEvent[]): NewResponseEvent[] {
  const createdAt = new Date().toISOString();
  return entries.map(({ responseId, sequenceNumber, event, json }) => ({ responseId, sequenceNumber, event, json, createdAt }));
}
