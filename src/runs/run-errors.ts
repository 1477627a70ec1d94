// Why a run ended in failure or was cancelled: a stable code and a message, stored on the run and shown
// as the Run's `error` extension field (openapi/openapi.yaml, RunError).
import { isGatewayError } from '../http/errors';

export type RunErrorCode =
  /** A model call failed; the message is the upstream error's (a GatewayError code narrows it: upstream_timeout, model_not_found…). */
  | 'upstream_error'
  | 'upstream_timeout'
  | 'model_not_found'
  /** A token or cost budget of the run's organization, user or key is used up (the message names it and when it resets). */
  | 'budget_exceeded'
  /** The run's executions were interrupted (worker stopped or crashed) more often than allowed. */
  | 'interrupted'
  /** The agent version the run executes no longer exists. */
  | 'agent_version_missing'
  /** The run exceeded its timeout (status cancelled). */
  | 'timeout'
  /** Cancelled through the API (status cancelled); the message is the caller's reason. */
  | 'cancelled'
  /** Anything else that stopped a step. */
  | 'run_error';

export interface RunError {
  code: RunErrorCode;
  message: string;
}

/** The error a failed step leaves on its run. */
export function runErrorOf(err: unknown): RunError {
  const message = err instanceof Error && err.message ? err.message : 'The run failed.';
  // Model calls are the only source of GatewayErrors inside a step.
  if (isGatewayError(err)) {
    const code = err.code === 'upstream_timeout' || err.code === 'model_not_found' || err.code === 'budget_exceeded' ? err.code : 'upstream_error';
    return { code, message };
  }
  return { code: 'run_error', message };
}
