// The process's compaction service, from the config: its settings (responses.compaction), the
// stored history's rendering (history.ts), token counting with its metric, and the outcome metric.
import type { GatewayConfig } from '../config/types';
import { mintId } from '../formats/responses';
import type { Metrics } from '../log/metrics';
import type { ModelCalls } from '../model-call/model-calls';
import type { ModelRouter } from '../providers/types';
import type { Store } from '../store/port';
import { ConversationCompaction } from './compaction';
import { historyItem, summaryMessage } from './history';
import { TokenCounting } from './tokens';

export interface CompactionServiceDeps {
  config: Pick<GatewayConfig, 'responses'>;
  store: Pick<Store, 'conversations'>;
  models: ModelRouter;
  modelCalls: ModelCalls;
  metrics: Pick<Metrics, 'conversationContexts' | 'contextCharsCounted'>;
}

export function createCompaction(deps: CompactionServiceDeps): ConversationCompaction {
  const { metrics } = deps;
  const { model, threshold, target } = deps.config.responses.compaction;
  return new ConversationCompaction({
    store: deps.store,
    modelCalls: deps.modelCalls,
    models: deps.models,
    tokens: new TokenCounting((method, chars) => metrics.contextCharsCounted.inc({ method }, chars)),
    history: { summaryItem: summaryMessage, modelItem: historyItem },
    settings: { ...(model !== undefined ? { model } : {}), threshold, target },
    mintItemId: () => mintId('cmp'),
    onOutcome: (outcome) => metrics.conversationContexts.inc({ outcome }),
  });
}
