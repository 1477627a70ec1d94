// The provider shared by the three hostings: canonical request → Messages body → the hosting's HTTP
// request over the shared transport → reply or event stream → canonical reply or stream parts
// (generate/stream), or ChatCompletion or chunks (chat/chatStream, until every caller has moved).
import type { ModelRequest, ModelResponse, OptionName, StreamPart, WireFormat } from '../../canonical/model';
import type { ProviderConfig, ProviderType } from '../../config/types';
import { GatewayError } from '../../http/errors';
import { UpstreamTransport, type UpstreamRequest, type UpstreamResponse } from '../http/transport';
import type { CallOptions, ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ForwardOptions, Provider, WireOperation } from '../types';
import type { AnthropicHosting } from './anthropic-hosting';
import { anthropicResponseToCompletion } from './anthropic-response-to-completion';
import { anthropicStreamToChunks } from './anthropic-stream-to-chunks';
import { anthropicStreamToParts } from './anthropic-stream-to-parts';
import { anthropicToCanonical } from './anthropic-to-canonical';
import type { AnthropicMessage } from './anthropic-wire-types';
import { ANTHROPIC_HONOURED_OPTIONS, canonicalToAnthropic } from './canonical-to-anthropic';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages';
import { anthropicErrorMapper } from './map-anthropic-error';

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

  async chat(request: ChatCompletionRequest, upstreamModel: string, options: CallOptions): Promise<ChatCompletion> {
    const plan = convertToAnthropicMessages(request);
    const upstream = await this.hosting.prepare(plan.body, upstreamModel, false, options.signal);
    const response = await this.send(upstream, options.signal);
    const message = (await response.json()) as AnthropicMessage;
    if (typeof message !== 'object' || message === null || !Array.isArray(message.content)) {
      throw new GatewayError('upstream_error', `Upstream provider ${this.name} sent a reply that is not an Anthropic message.`);
    }
    return anthropicResponseToCompletion(message, { model: request.model, jsonTool: plan.jsonTool });
  }

  async *chatStream(request: ChatCompletionRequest, upstreamModel: string, options: CallOptions): AsyncIterable<ChatCompletionChunk> {
    const plan = convertToAnthropicMessages(request);
    const upstream = await this.hosting.prepare(plan.body, upstreamModel, true, options.signal);
    const response = await this.send(upstream, options.signal);
    const streamOptions = request['stream_options'] as { include_usage?: unknown } | undefined;
    yield* anthropicStreamToChunks(this.hosting.events(response.body), {
      model: request.model,
      jsonTool: plan.jsonTool,
      includeUsage: streamOptions?.include_usage === true,
    });
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
