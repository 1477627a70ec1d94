// The provider shared by the three hostings: canonical request → Messages body → the hosting's HTTP
// request over the shared transport → reply or event stream → canonical reply or stream parts.
import type { ModelRequest, ModelResponse, OptionName, StreamPart, WireFormat } from '../../canonical/model';
import type { ProviderConfig, ProviderType } from '../../config/types';
import { GatewayError } from '../../http/errors';
import { UpstreamTransport, type UpstreamRequest, type UpstreamResponse } from '../http/transport';
import type { CallOptions, ForwardOptions, Provider, WireOperation } from '../types';
import type { AnthropicHosting } from './anthropic-hosting';
import { anthropicStreamToParts } from './anthropic-stream-to-parts';
import { anthropicToCanonical } from './anthropic-to-canonical';
import type { AnthropicMessage } from './anthropic-wire-types';
import { ANTHROPIC_HONOURED_OPTIONS, canonicalToAnthropic } from './canonical-to-anthropic';
import { anthropicErrorMapper } from './map-anthropic-error';
import { thinkingLeftOut } from './anthropic-thinking-budget';

export class AnthropicFamilyProvider implements Provider {
  private readonly transport: UpstreamTransport;
  readonly forwards: readonly WireOperation[];
  readonly honours: ReadonlySet<OptionName>;
  /** Unmodelled /v1/messages fields (container, mcp_servers, service_tier...) are Messages fields: sent. */
  readonly extrasOf: WireFormat = 'messages';

  constructor(
    readonly name: string,
    readonly type: Extract<ProviderType, 'anthropic' | 'bedrock-anthropic' | 'vertex-anthropic'>,
    readonly config: ProviderConfig,
    private readonly hosting: AnthropicHosting,
  ) {
    this.transport = new UpstreamTransport(name, config, { mapError: anthropicErrorMapper(name) });
    this.forwards = hosting.forwardRequest ? ['messages'] : [];
    const unsent = new Set(hosting.unsentOptions ?? []);
    this.honours = new Set([...ANTHROPIC_HONOURED_OPTIONS].filter((option) => !unsent.has(option)));
  }

  unhonoured(request: ModelRequest): readonly OptionName[] {
    return thinkingLeftOut(request.options.reasoning, request.options.maxOutputTokens) ? ['reasoning'] : [];
  }

  forward(operation: WireOperation, body: string | Buffer, options: ForwardOptions): Promise<UpstreamResponse> {
    if (operation !== 'messages' || !this.hosting.forwardRequest) {
      return Promise.reject(new Error(`provider ${this.name} does not forward the ${operation} format`));
    }
    const upstream = this.hosting.forwardRequest(body, options.stream);
    return this.transport.send(options.signal ? { ...upstream, signal: options.signal } : upstream);
  }

  async generate(request: ModelRequest, upstreamModel: string, options: CallOptions): Promise<ModelResponse> {
    const call = canonicalToAnthropic(request);
    const upstream = await this.hosting.prepare(call.body, upstreamModel, false, options.signal);
    const response = await this.send(upstream, options.signal);
    return anthropicToCanonical(this.message(await response.json()), { jsonTool: call.jsonTool });
  }

  async *stream(request: ModelRequest, upstreamModel: string, options: CallOptions): AsyncIterable<StreamPart> {
    const call = canonicalToAnthropic(request);
    const upstream = await this.hosting.prepare(call.body, upstreamModel, true, options.signal);
    const response = await this.send(upstream, options.signal);
    yield* anthropicStreamToParts(this.hosting.events(response.body), { jsonTool: call.jsonTool, model: upstreamModel });
  }

  private message(reply: unknown): AnthropicMessage {
    if (typeof reply !== 'object' || reply === null || !Array.isArray((reply as { content?: unknown }).content)) {
      throw new GatewayError('upstream_error', `Upstream provider ${this.name} sent a reply that is not an Anthropic message.`);
    }
    return reply as AnthropicMessage;
  }

  private async send(upstream: UpstreamRequest, signal: AbortSignal | undefined): Promise<UpstreamResponse> {
    try {
      return await this.transport.send(signal ? { ...upstream, signal } : upstream);
    } catch (err) {
      if (err instanceof GatewayError && err.status === 401) this.hosting.onAuthFailure?.();
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.transport.close();
    await this.hosting.close?.();
  }
}
