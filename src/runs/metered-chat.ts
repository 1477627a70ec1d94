// A run's model calls (step turns and judge verdicts) metered like the gateway's own calls: a usage
// record per call attributed to the run's organization, user, key and model, the token counters and the
// upstream latency histogram (what the audit plugin and UpstreamCall do for API calls).
import type { Logger } from 'winston';
import type { Metrics } from '../log/metrics';
import { outcomeOf, tokenCount } from '../operations/gateway/upstream-call';
import type { ChatCompletion, ChatCompletionRequest, ModelRouter } from '../providers/types';
import type { Store } from '../store/port';
import type { RunRecord } from '../store/types';

export interface MeterDeps {
  store: Store;
  models: ModelRouter;
  metrics: Metrics;
  logger: Logger;
  now(): Date;
}

export async function meteredChat(
  deps: MeterDeps,
  run: Pick<RunRecord, 'id' | 'orgId' | 'userId' | 'keyId'>,
  request: ChatCompletionRequest,
  signal: AbortSignal,
): Promise<ChatCompletion> {
  const resolved = deps.models.resolve(run.orgId, request.model);
  const model = resolved.model.id;
  const started = process.hrtime.bigint();
  const observe = (outcome: string): void => {
    deps.metrics.upstreamDuration.labels(resolved.provider.name, model, outcome).observe(Number(process.hrtime.bigint() - started) / 1e9);
  };
  let completion: ChatCompletion;
  try {
    completion = await resolved.provider.chat(request, resolved.upstreamModel, { signal });
  } catch (err) {
    observe(outcomeOf(err, signal));
    throw err;
  }
  observe('ok');
  const promptTokens = tokenCount(completion.usage?.prompt_tokens ?? 0);
  const completionTokens = tokenCount(completion.usage?.completion_tokens ?? 0);
  deps.metrics.upstreamTokens.labels(run.orgId, model, 'prompt').inc(promptTokens);
  deps.metrics.upstreamTokens.labels(run.orgId, model, 'completion').inc(completionTokens);
  // Not fenced by the run's lease: the tokens were spent whoever holds the run now. Fails open like the
  // audit trail: a store hiccup does not fail the step whose reply is already here.
  await deps.store.usage
    .insertMany([
      { at: deps.now().toISOString(), orgId: run.orgId, userId: run.userId, keyId: run.keyId, model, promptTokens, completionTokens, requestId: run.id },
    ])
    .catch((err: unknown) => deps.logger.warn('run usage record not written', { runId: run.id, errorName: err instanceof Error ? err.name : 'unknown' }));
  return completion;
}
