// One line per provider type: adding a provider is a folder plus a line here.
import type { ProviderConfig } from '../config/types';
import { createAnthropicProvider } from './anthropic/anthropic-provider';
import { createBedrockAnthropicProvider } from './bedrock-anthropic/bedrock-anthropic-provider';
import { DemoProvider } from './demo/demo-provider';
import { GeminiProvider } from './gemini/gemini-provider';
import { OpenAiProvider } from './openai/openai-provider';
import { createVertexAnthropicProvider } from './vertex-anthropic/vertex-anthropic-provider';
import type { Provider } from './types';

export function createProvider(name: string, config: ProviderConfig): Provider {
  switch (config.type) {
    case 'demo':
      return new DemoProvider(name, config);
    case 'gemini':
      return new GeminiProvider(name, config);
    case 'openai':
      return new OpenAiProvider(name, config);
    case 'anthropic':
      return createAnthropicProvider(name, config);
    case 'bedrock-anthropic':
      return createBedrockAnthropicProvider(name, config);
    case 'vertex-anthropic':
      return createVertexAnthropicProvider(name, config);
  }
}
