// Anthropic's own API: POST {baseUrl}/v1/messages with x-api-key and anthropic-version headers.
import type { ProviderConfig } from '../../config/types';
import type { UpstreamRequest } from '../http/transport';
import { AnthropicFamilyProvider } from './anthropic-family-provider';
import type { AnthropicHosting } from './anthropic-hosting';
import { anthropicSseEvents } from './anthropic-sse-events';
import type { AnthropicMessagesBody } from './anthropic-wire-types';

/** https://docs.anthropic.com/en/api/versioning */
export const ANTHROPIC_VERSION = '2023-06-01';
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

export function messagesUrl(baseUrl: string | undefined): string {
  const base = (baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '');
  // The operator contract's baseUrl has no /v1; tolerate one.
  return base.endsWith('/v1') ? `${base}/messages` : `${base}/v1/messages`;
}

export class AnthropicApiHosting implements AnthropicHosting {
  private readonly url: string;
  private readonly headers: Record<string, string>;

  constructor(config: ProviderConfig) {
    this.url = messagesUrl(config.baseUrl);
    this.headers = {
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      ...(config.apiKey ? { 'x-api-key': config.apiKey } : {}),
      ...(config.headers ?? {}),
    };
  }

  prepare(body: AnthropicMessagesBody, upstreamModel: string, stream: boolean): Promise<UpstreamRequest> {
    const wire = stream ? { model: upstreamModel, ...body, stream: true } : { model: upstreamModel, ...body };
    const headers = stream ? { ...this.headers, accept: 'text/event-stream' } : this.headers;
    return Promise.resolve({ url: this.url, method: 'POST', headers, body: JSON.stringify(wire) });
  }

  events(body: AsyncIterable<Buffer>): ReturnType<AnthropicHosting['events']> {
    return anthropicSseEvents(body);
  }
}

export function createAnthropicProvider(name: string, config: ProviderConfig): AnthropicFamilyProvider {
  return new AnthropicFamilyProvider(name, 'anthropic', config, new AnthropicApiHosting(config));
}
