// The provider shared by the three hostings: canonical request → Messages body → the hosting's HTTP
// request over the shared transport → reply or event stream → ChatCompletion or chunks.
import type { ProviderConfig, ProviderType } from '../../config/types';
import { GatewayError } from '../../http/errors';
import { UpstreamTransport, type UpstreamRequest, type UpstreamResponse } from '../http/transport';
import type { CallOptions, ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ForwardOptions, Provider, WireOperation } from '../types';
import type { AnthropicHosting } from './anthropic-hosting';
import { anthropicResponseToCompletion } from './anthropic-response-to-completion';
import { anthropicStreamToChunks } from './anthropic-stream-to-chunks';
import type { AnthropicMessage } from './anthropic-wire-types';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages';
import { anthropicErrorMapper } from './map-anthropic-error';

export class AnthropicFamilyProvider implements Provider {
  private readonly transport: UpstreamTransport;
  readonly forwards: readonly WireOperation[];

  constructor(
    readonly name: string,
    readonly type: Extract<ProviderType, 'anthropic' | 'bedrock-anthropic' | 'vertex-anthropic'>,
    readonly config: ProviderConfig,
    private readonly hosting: AnthropicHosting,
  ) {
    this.transport = new UpstreamTransport(name, config, { mapError: anthropicErrorMapper(name) });
    this.forwards = hosting.forwardRequest ? ['messages'] : [];
  }

  forward(operation: WireOperation, body: string | Buffer, options: ForwardOptions): Promise<UpstreamResponse> {
    if (operation !== 'messages' || !this.hosting.forwardRequest) {
      return Promise.reject(new Error(`provider ${this.name} does not forward the ${operation} format`));
    }
    const upstream = this.hosting.forwardRequest(body, options.stream);
    return this.transport.send(options.signal ? { ...upstream, signal: options.signal } : upstream);
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
