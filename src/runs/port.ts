// The run service: what the HTTP handlers and the schedule/webhook triggers call. Implemented by the
// run engine (src/runs/service.ts), built once per app in buildApp() and exposed as services.runs.
import type { AgentRecord, Principal, RunInput, RunRecord, RunTrigger } from '../store/types';
import type { ResponsesInvocation } from './run-response';

export interface TriggerRequest {
  /** Who triggers: the API caller, or the agent's creator for schedule and webhook triggers. */
  principal: Principal;
  /** The agent, already checked visible to the caller. Runs execute its latest version. */
  agent: AgentRecord;
  /**
   * Inputs as posted. Names that match no label of the agent are dropped silently; a required label
   * that is missing makes trigger() throw GatewayError('missing_inputs') (422) naming every such label.
   */
  inputs: readonly RunInput[];
  trigger: RunTrigger;
  sourceRunId?: string | null;
  /** The new run's id, when the caller needs it before the run exists (its `resp_run_` response); minted otherwise. */
  runId?: string;
  /** What a Responses request (`model: agent/<id>`) adds to the run: kept in its conversation's metadata. */
  invocation?: ResponsesInvocation;
}

export interface RunService {
  /** Creates the run (in_progress), its own conversation and its step rows, then enqueues it. */
  trigger(request: TriggerRequest): Promise<RunRecord>;
  /** A new run with the source run's original inputs on the agent's latest version; the source is untouched. */
  restart(principal: Principal, source: RunRecord): Promise<RunRecord>;
  /** in_progress -> cancelled (endedAt set, result null). Any other status: GatewayError('conflict'). */
  cancel(principal: Principal, run: RunRecord, reason: string): Promise<RunRecord>;
  /**
   * failure -> in_progress with the same id: endedAt back to null, completed steps kept, the failed
   * step executed again. Any other status: GatewayError('conflict').
   */
  retryFailedStep(principal: Principal, run: RunRecord): Promise<RunRecord>;
}
