// Anthropic models on Google Vertex AI: rawPredict / streamRawPredict
// (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude). The body is the
// Messages body with `anthropic_version: "vertex-2023-10-16"` and without `model` (it is in the path);
// streams are Anthropic's own SSE. Authentication: a service-account access token (see
// google-access-token.ts), cached until expiry.
import type { ProviderConfig } from '../../config/types';
import { AnthropicFamilyProvider } from '../anthropic/anthropic-family-provider';
import type { AnthropicHosting } from '../anthropic/anthropic-hosting';
import { anthropicSseEvents } from '../anthropic/anthropic-sse-events';
import type { AnthropicMessagesBody, AnthropicStreamEvent } from '../anthropic/anthropic-wire-types';
import { UpstreamTransport, type UpstreamRequest } from '../http/transport';
import { GoogleAccessTokenSource, googleOAuthErrorMapper } from './google-access-token';
import { loadServiceAccountKey } from './load-service-account-key';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export interface VertexOptions {
  /** Clock for the token cache (tests). */
  now?: () => number;
}

export class VertexAnthropicHosting implements AnthropicHosting {
  private readonly modelsUrl: string;
  private readonly tokens: GoogleAccessTokenSource;
  private readonly tokenTransport: UpstreamTransport;
  private readonly extraHeaders: Record<string, string>;

  constructor(name: string, config: ProviderConfig, options: VertexOptions = {}) {
    const { projectId, region, serviceAccountKey } = config;
    if (!projectId || !region || !serviceAccountKey) {
      throw new Error(`providers.${name}: a vertex-anthropic provider needs projectId, region and serviceAccountKey`);
    }
    // The global endpoint has no region prefix.
    const host = region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;
    const base = (config.baseUrl ?? host).replace(/\/+$/, '');
    this.modelsUrl = `${base}/v1/projects/${encodeURIComponent(projectId)}/locations/${encodeURIComponent(region)}/publishers/anthropic/models`;
    // The token endpoint gets its own pool, timeouts and retries (the same settings as the provider).
    this.tokenTransport = new UpstreamTransport(`${name} (token)`, config, { mapError: googleOAuthErrorMapper(name) });
    this.tokens = new GoogleAccessTokenSource({
      providerName: name,
      loadKey: () => loadServiceAccountKey(serviceAccountKey, name),
      tokenUrl: config.tokenUrl,
      transport: this.tokenTransport,
      ...(options.now ? { now: options.now } : {}),
    });
    this.extraHeaders = {};
    for (const [key, value] of Object.entries(config.headers ?? {})) this.extraHeaders[key.toLowerCase()] = value;
  }

  async prepare(body: AnthropicMessagesBody, upstreamModel: string, stream: boolean, signal: AbortSignal | undefined): Promise<UpstreamRequest> {
    const token = await this.tokens.get(signal);
    const { model: _model, stream: _stream, ...rest } = body;
    const payload = JSON.stringify(
      stream ? { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest, stream: true } : { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest },
    );
    return {
      // Vertex model ids carry a version after '@' (claude-sonnet-4@20250514), sent as is like Google's SDKs do.
      url: `${this.modelsUrl}/${encodeURIComponent(upstreamModel).replace(/%40/g, '@')}:${stream ? 'streamRawPredict' : 'rawPredict'}`,
      method: 'POST',
      headers: {
        ...this.extraHeaders,
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
      },
      body: payload,
    };
  }

  events(body: AsyncIterable<Buffer>): AsyncIterable<AnthropicStreamEvent> {
    return anthropicSseEvents(body);
  }

  onAuthFailure(): void {
    this.tokens.invalidate();
  }

  async close(): Promise<void> {
    await this.tokenTransport.close();
  }
}

export function createVertexAnthropicProvider(name: string, config: ProviderConfig, options: VertexOptions = {}): AnthropicFamilyProvider {
  return new AnthropicFamilyProvider(name, 'vertex-anthropic', config, new VertexAnthropicHosting(name, config, options));
}
