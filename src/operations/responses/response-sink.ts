// Where a response's events and final state go besides the caller: nowhere for a stateless response,
// the store and its event log for `store: true` (stored-response.ts).
export type ResponseEventPayload = Record<string, unknown> & { type: string; sequence_number: number };

export interface ResponseSink {
  /** The response exists (its first snapshot, status in_progress): stored before the first event. */
  begin(snapshot: Record<string, unknown>): Promise<void>;
  /**
   * One event, as the caller received it (synchronous: written off the hot path); `json`: its text as
   * sent to the caller, stored as it is when given.
   */
  event(event: ResponseEventPayload, json?: string): void;
  /** The terminal state: the final response object. Awaited after the caller's last event, before its stream ends. */
  end(final: Record<string, unknown>): Promise<void>;
}
