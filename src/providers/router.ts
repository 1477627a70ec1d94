import type { GatewayConfig } from '../config/types';
import { GatewayError } from '../http/errors';
import { createProvider } from './registry';
import type { ModelRouter, Provider, ResolvedModel } from './types';
import type { ModelConfig } from '../config/types';

/** Resolves model ids per organization (its `models` allow-list) to the provider that serves them. */
export class ConfigModelRouter implements ModelRouter {
  private readonly providers = new Map<string, Provider>();
  private readonly models = new Map<string, ModelConfig>();
  private readonly allowed = new Map<string, ModelConfig[]>();
  /** The first-start organization (created in the store, not the config) may use every model. */
  private readonly fallback: ModelConfig[];

  constructor(config: GatewayConfig) {
    for (const [name, providerConfig] of Object.entries(config.providers)) {
      this.providers.set(name, createProvider(name, providerConfig));
    }
    for (const model of config.models) this.models.set(model.id, model);
    this.fallback = config.models;
    for (const org of config.organizations) {
      const all = org.models.includes('*');
      this.allowed.set(
        org.id,
        config.models.filter((m) => all || org.models.includes(m.id)),
      );
    }
  }

  list(orgId: string): ModelConfig[] {
    return this.allowed.get(orgId) ?? (orgId === 'default' ? this.fallback : []);
  }

  resolve(orgId: string, modelId: string): ResolvedModel {
    const model = this.list(orgId).find((m) => m.id === modelId);
    const provider = model ? this.providers.get(model.provider) : undefined;
    if (!model || !provider) {
      throw new GatewayError('model_not_found', `The model '${modelId}' does not exist or you do not have access to it.`, { param: 'model' });
    }
    return { model, provider, upstreamModel: model.upstream ?? model.id };
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.close()));
  }
}
