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
  /** Built once: every request sends the same headers. */
  private readonly jsonHeaders: Record<string, string>;
  private readonly streamHeaders: Record<string, string>;

  constructor(config: ProviderConfig) {
    this.url = messagesUrl(config.baseUrl);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'anthropic-version': ANTHROPIC_VERSION };
    if (config.apiKey) headers['x-api-key'] = config.apiKey;
    // Operator headers (e.g. anthropic-beta) may override the defaults.
    for (const [key, value] of Object.entries(config.headers ?? {})) headers[key.toLowerCase()] = value;
    this.jsonHeaders = { ...headers, accept: 'application/json' };
    this.streamHeaders = { ...headers, accept: 'text/event-stream' };
  }

  prepare(body: AnthropicMessagesBody, upstreamModel: string, stream: boolean): Promise<UpstreamRequest> {
    const wire = stream ? { ...body, model: upstreamModel, stream: true } : { ...body, model: upstreamModel };
    return Promise.resolve(this.forwardRequest(JSON.stringify(wire), stream));
  }

  forwardRequest(body: string | Buffer, stream: boolean): UpstreamRequest {
    return { url: this.url, method: 'POST', headers: stream ? this.streamHeaders : this.jsonHeaders, body };
  }

  events(body: AsyncIterable<Buffer>): ReturnType<AnthropicHosting['events']> {
    return anthropicSseEvents(body);
  }
}

export function createAnthropicProvider(name: string, config: ProviderConfig): AnthropicFamilyProvider {
  return new AnthropicFamilyProvider(name, 'anthropic', config, new AnthropicApiHosting(config));
}
