// OpenAI-format upstreams (OpenAI, Azure-style, vLLM, Ollama): `baseUrl` + /chat/completions and
// /completions (and /responses when `responses: native` says the upstream speaks Responses), the key
// as a Bearer token, `config.headers` added (Azure `api-key`, `api-version` style extras). The HTTP
// routes forward the caller's own bytes through forward(); every translated call goes through
// generate()/stream(), canonical model ⇄ chat completions (convert-model-request-to-openai-chat.ts,
// convert-openai-chat-completion.ts, openai-chat-stream-to-parts.ts).
//
// Why not http-proxy-middleware here: it pipes one request to one upstream attempt, but this path must
// retry 429/5xx/connection errors with backoff before the first byte, enforce connect/first-byte/idle
// timeouts, refuse private addresses (SSRF guard), replace the model name and apply DLP/strip
// transforms, and read usage from the reply for the audit trail. The shared transport does
// all of that with the same zero-copy piping (Buffers relayed as they arrive), so one code path serves
// both the proxy and the library calls.
import type { ModelRequest, ModelResponse, OptionName, StreamPart } from '../../canonical/model';
import type { ProviderConfig } from '../../config/types';
import { GatewayError } from '../../http/errors';
import { UpstreamTransport, type UpstreamResponse } from '../http/transport';
import type { CallOptions, ForwardOptions, Provider, WireOperation } from '../types';
import { convertModelRequestToOpenAiChat } from './convert-model-request-to-openai-chat';
import { convertOpenAiChatCompletion } from './convert-openai-chat-completion';
import { openAiChatStreamToParts } from './openai-chat-stream-to-parts';
import type { OpenAiChatCompletion } from './openai-chat-wire-types';

const PATHS: Readonly<Record<'chat' | 'completions' | 'responses', string>> = {
  chat: '/chat/completions',
  completions: '/completions',
  responses: '/responses',
};

/**
 * Every canonical option has a chat-completions field except top_k (OpenAI rejects it); n and logprobs
 * are not honoured because a canonical reply carries one choice and no logprobs (a chat caller gets
 * them on the pass-through path, which never comes here).
 */
const CHAT_OPTIONS: ReadonlySet<OptionName> = new Set<OptionName>([
  'maxOutputTokens',
  'temperature',
  'topP',
  'stop',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseFormat',
  'reasoning',
  'parallelToolCalls',
  'user',
  'verbosity',
  'serviceTier',
  'promptCacheKey',
]);

export class OpenAiProvider implements Provider {
  readonly type = 'openai' as const;
  readonly forwards: readonly WireOperation[];
  readonly honours = CHAT_OPTIONS;
  readonly strictTools = true;
  readonly extrasOf = 'chat' as const;
  private readonly baseUrl: string;
  private readonly transport: UpstreamTransport;
  /** Built once: every request sends the same upstream headers. */
  private readonly jsonHeaders: Record<string, string>;
  private readonly streamHeaders: Record<string, string>;

  constructor(
    readonly name: string,
    readonly config: ProviderConfig,
  ) {
    this.baseUrl = (config.baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
    // `responses: native`: the upstream speaks Responses itself (OpenAI, Azure); otherwise (the
    // default, `translate`) Responses calls are translated onto chat completions.
    this.forwards = config.responses === 'native' ? ['chat', 'completions', 'responses'] : ['chat', 'completions'];
    this.transport = new UpstreamTransport(name, config);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (config.apiKey) headers['authorization'] = `Bearer ${config.apiKey}`;
    for (const [key, value] of Object.entries(config.headers ?? {})) headers[key.toLowerCase()] = value;
    this.jsonHeaders = { ...headers, accept: 'application/json' };
    this.streamHeaders = { ...headers, accept: 'text/event-stream' };
  }

  private url(path: string): string {
    // Azure-style deployments carry `?api-version=` in the base URL: keep the query after the path.
    const query = this.baseUrl.indexOf('?');
    return query < 0 ? this.baseUrl + path : this.baseUrl.slice(0, query) + path + this.baseUrl.slice(query);
  }

  forward(operation: WireOperation, body: string | Buffer, options: ForwardOptions): Promise<UpstreamResponse> {
    if (operation === 'messages') {
      return Promise.reject(new Error(`provider ${this.name} does not speak the ${operation} format`));
    }
    return this.transport.send({
      url: this.url(PATHS[operation]),
      headers: options.stream ? this.streamHeaders : this.jsonHeaders,
      body,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  async generate(request: ModelRequest, upstreamModel: string, options: CallOptions): Promise<ModelResponse> {
    const body = convertModelRequestToOpenAiChat(request, upstreamModel, false);
    const response = await this.forward('chat', JSON.stringify(body), { ...options, stream: false });
    const reply = await response.json();
    if (reply === null || typeof reply !== 'object') throw new GatewayError('upstream_error', `Upstream provider ${this.name} sent an empty reply.`);
    return convertOpenAiChatCompletion(reply as OpenAiChatCompletion, this.name, upstreamModel);
  }

  async *stream(request: ModelRequest, upstreamModel: string, options: CallOptions): AsyncIterable<StreamPart> {
    const body = convertModelRequestToOpenAiChat(request, upstreamModel, true);
    const response = await this.forward('chat', JSON.stringify(body), { ...options, stream: true });
    yield* openAiChatStreamToParts(response.body, this.name, upstreamModel);
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}
