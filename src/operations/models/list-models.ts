import { createHash } from 'node:crypto';
import type { ModelConfig } from '../../config/types';
import { modelsForKey } from '../../providers/key-models';
import type { Handler } from '../types';

/** `created` must be stable across restarts: the configured value, else derived from the model id. */
export function modelCreated(model: ModelConfig): number {
  if (model.created !== undefined) return model.created;
  const digest = createHash('sha256').update(model.id).digest();
  // A fixed epoch (2024-01-01) plus up to ~1 year derived from the id.
  return 1_704_067_200 + (digest.readUInt32BE(0) % 31_536_000);
}

export const listModels: Handler = async (ctx, services) => {
  const orgId = ctx.principal?.orgId ?? '';
  // A key with a model allow-list sees only those of its organization's models.
  return {
    status: 200,
    body: {
      object: 'list',
      data: modelsForKey(services.models, orgId, ctx.principal?.models).map((model) => ({
        id: model.id,
        object: 'model',
        created: modelCreated(model),
        owned_by: model.provider,
        context_window: model.contextWindow ?? null,
        pricing: model.pricing
          ? { input: model.pricing.input, cached_input: model.pricing.cachedInput ?? model.pricing.input, output: model.pricing.output }
          : null,
      })),
    },
  };
};
