// A key's model allow-list (ApiKeyRecord.models) narrows its organization's models: the caller may use,
// and GET /v1/models lists, only the models both allow. A model outside it is the same 404
// model_not_found as a model the organization may not use, naming the model.
import type { ModelConfig } from '../config/types';
import { GatewayError } from '../http/errors';
import type { ModelRouter, ResolvedModel } from './types';

/** The organization's models the key may use (all of them when `keyModels` is null or absent). */
export function modelsForKey(router: ModelRouter, orgId: string, keyModels: readonly string[] | null | undefined): ModelConfig[] {
  const models = router.list(orgId);
  return keyModels ? models.filter((m) => keyModels.includes(m.id)) : models;
}

/** router.resolve, refusing a model outside the key's allow-list. */
export function resolveForKey(router: ModelRouter, orgId: string, keyModels: readonly string[] | null | undefined, modelId: string): ResolvedModel {
  if (keyModels && !keyModels.includes(modelId)) {
    throw new GatewayError('model_not_found', `The model '${modelId}' does not exist or you do not have access to it.`, { param: 'model' });
  }
  return router.resolve(orgId, modelId);
}
