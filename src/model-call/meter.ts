// What a model call reports as it runs, whoever made it: its token usage (usage records, token metrics,
// the audit record) and how it ended (the upstream latency histogram). A gateway request meters into its
// request context (request-meter.ts); an agent run into the store directly (src/runs/run-meter.ts).
import { isGatewayError } from '../http/errors';
import type { Usage } from '../canonical/model';
import type { ModelCallSpan } from '../telemetry/gen-ai';

export type UpstreamOutcome = 'ok' | 'error' | 'timeout' | 'aborted';

export interface ModelCallMeter {
  /** The call's token usage; the first report counts, later ones are ignored. */
  usage(usage: Usage): void;
  /** The call ended; the first outcome counts. */
  finish(outcome: UpstreamOutcome): void;
  /** The call failed with `err` (its code is recorded, the outcome derived from it). */
  fail(err: unknown): void;
  /** The call's span when tracing is on (ended with the call), else null. */
  readonly span?: ModelCallSpan | null;
}

export function outcomeOf(err: unknown, signal: { readonly aborted: boolean }): UpstreamOutcome {
  if (signal.aborted) return 'aborted';
  if (isGatewayError(err) && err.code === 'upstream_timeout') return 'timeout';
  return 'error';
}

/** Usage columns are 32-bit integers. */
const MAX_TOKENS = 2_147_483_647;

/**
 * A token count as reported by an upstream, made a count: a fraction rounded, a negative or non-finite
 * number (JSON's 1e400 parses to Infinity) 0, a huge one capped. One bad value written as it came would
 * fail its whole batch of usage and audit records in the store, again at every retry.
 */
export function tokenCount(reported: number): number {
  return Number.isFinite(reported) && reported > 0 ? Math.min(Math.round(reported), MAX_TOKENS) : 0;
}
