// OpenAI-format upstreams (OpenAI, Azure-style, vLLM, Ollama). Minimal first version: JSON and SSE over
// fetch. The model-gateway work replaces the transport with pooled, retried, pass-through forwarding.
import type { ProviderConfig } from '../../config/types';
import { GatewayError } from '../../http/errors';
import type { CallOptions, ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, Provider } from '../types';

export class OpenAiProvider implements Provider {
  readonly type = 'openai' as const;
  private readonly baseUrl: string;

  constructor(
    readonly name: string,
    readonly config: ProviderConfig,
  ) {
    this.baseUrl = (config.baseUrl ?? 'https://api.openai.com/v1').replace(/\/+$/, '');
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(this.config.headers ?? {}) };
    if (this.config.apiKey) headers['authorization'] = `Bearer ${this.config.apiKey}`;
    return headers;
  }

  private async post(body: unknown, options: CallOptions): Promise<Response> {
    const init: RequestInit = { method: 'POST', headers: this.headers(), body: JSON.stringify(body) };
    if (options.signal) init.signal = options.signal;
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/chat/completions`, init);
    } catch (err) {
      throw new GatewayError('upstream_error', `Upstream provider ${this.name} is unreachable.`, { cause: err });
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      let message = `Upstream provider ${this.name} answered ${response.status}.`;
      try {
        const parsed = JSON.parse(text) as { error?: { message?: string } };
        if (parsed.error?.message) message = parsed.error.message;
      } catch {
        // not JSON: keep the generic message
      }
      throw new GatewayError('upstream_error', message, { status: response.status >= 400 ? response.status : 502 });
    }
    return response;
  }

  async chat(request: ChatCompletionRequest, upstreamModel: string, options: CallOptions): Promise<ChatCompletion> {
    const response = await this.post({ ...request, model: upstreamModel, stream: false }, options);
    return (await response.json()) as ChatCompletion;
  }

  async *chatStream(request: ChatCompletionRequest, upstreamModel: string, options: CallOptions): AsyncIterable<ChatCompletionChunk> {
    const response = await this.post({ ...request, model: upstreamModel, stream: true }, options);
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of event.split('\n')) {
          if (!line.startsWith('data:')) continue;
          const data = line.slice(5).trim();
          if (data === '[DONE]') return;
          yield JSON.parse(data) as ChatCompletionChunk;
        }
      }
    }
  }

  async close(): Promise<void> {}
}
