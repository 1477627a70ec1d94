// Checks shared by the client tests: what the gateway sent, against the Open Responses spec and our
// OpenAPI document (test/support/open-responses.ts), and the numbering of a stream's events.
import assert from 'node:assert/strict';
import { assertOpenResponsesEvent, assertOpenResponsesObject, assertOurEvent, assertOurResponseObject } from '../../support/open-responses';

/** A stream event is valid by the Open Responses spec and by our document. */
export function assertValidEvent(event: unknown): void {
  assertOpenResponsesEvent(event);
  assertOurEvent(event);
}

/** A response object as an SDK returns it is valid by both documents (without the SDK's computed `output_text`). */
export function assertValidResponse(response: unknown): void {
  const { output_text: _computed, ...wire } = response as Record<string, unknown>;
  assertOpenResponsesObject(wire);
  assertOurResponseObject(wire);
}

export function assertNumberedFromZero(events: readonly { sequence_number: number }[]): void {
  assert.deepEqual(
    events.map((e) => e.sequence_number),
    events.map((_, n) => n),
    'sequence numbers run from 0 without gaps',
  );
}
