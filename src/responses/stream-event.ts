// One event of a response's SSE stream as the gateway produces, stores and replays it (spec "Events":
// an `event:` line with the name, a JSON `data:` payload carrying `type` and `sequence_number`, and an
// `id:` line equal to the sequence number).

export interface StreamEvent {
  /** Numbered by the writer from 0 without gaps; the `id:` of the SSE event. */
  sequenceNumber: number;
  /** The `event:` name, e.g. `response.output_text.delta`. */
  event: string;
  /** The `data:` payload, `type` and `sequence_number` included. */
  data: Record<string, unknown>;
  /**
   * `data` as the JSON text its writer sent the caller, when it has it: stored, published and replayed
   * as this text, never serialized again.
   */
  json?: string;
}

/** Events after which a response's stream has ended (an `error` event is followed by `response.failed`). */
const FINAL_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.failed', 'response.incomplete']);

export function isFinalEvent(name: string): boolean {
  return FINAL_EVENTS.has(name);
}

/** The events that end a stream or announce its end: a writer that died may have these numbered differently. */
export function isEndingEvent(name: string): boolean {
  return name === 'error' || FINAL_EVENTS.has(name);
}

/** The final event for a finished response's status (spec "Response status"); null while it is not finished. */
export function finalEventFor(status: string): string | null {
  switch (status) {
    case 'completed':
      return 'response.completed';
    case 'failed':
    case 'cancelled':
      return 'response.failed';
    case 'incomplete':
      return 'response.incomplete';
    default:
      return null;
  }
}

/** The event with another number (its payload's `sequence_number` too); the same object when unchanged. */
export function renumbered(event: StreamEvent, sequenceNumber: number): StreamEvent {
  if (event.sequenceNumber === sequenceNumber && event.data['sequence_number'] === sequenceNumber) return event;
  return { sequenceNumber, event: event.event, data: { ...event.data, sequence_number: sequenceNumber } };
}
