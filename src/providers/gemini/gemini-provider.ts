// The `gemini` provider: Google's Gemini API (generativelanguage v1beta). Canonical requests are
// translated to `models/{model}:generateContent` (streaming: `:streamGenerateContent?alt=sse`) and
// the replies back to canonical replies and stream parts (convert-model-request-to-gemini.ts,
// gemini-reply-to-parts.ts). A response format goes to Gemini's own JSON mode (responseMimeType +
// responseJsonSchema), so content is raw JSON, streaming or not (rule 4).
import { assembleResponse } from '../../canonical/assemble';
import type { ModelRequest, ModelResponse, OptionName, StreamPart } from '../../canonical/model';
import type { ProviderConfig } from '../../config/types';
import { GatewayError } from '../../http/errors';
import { parseSse } from '../http/sse-parser';
import { UpstreamTransport, type UpstreamResponse } from '../http/transport';
import { withheld } from '../http/upstream-errors';
import type { CallOptions, Provider } from '../types';
import { convertModelRequestToGemini } from './convert-model-request-to-gemini';
import { geminiReplyToParts, geminiStreamToParts } from './gemini-reply-to-parts';
import type { GeminiRequest, GeminiResponse } from './gemini-wire-types';
import { geminiErrorMapper } from './map-gemini-error';

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/** `gemini-2.5-flash`, `models/gemini-2.5-flash` and `tunedModels/x` all name a resource path. */
export function geminiModelPath(model: string): string {
  return /^(models|tunedModels)\//.test(model) ? model : `models/${model}`;
}

/**
 * The canonical options generationConfig has a field for (not user, parallelToolCalls, verbosity,
 * serviceTier, promptCacheKey), less those a canonical reply cannot carry back: several candidates (n)
 * and logprobs (reported dropped rather than paid for and lost).
 */
const GEMINI_OPTIONS: ReadonlySet<OptionName> = new Set<OptionName>([
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'stop',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseFormat',
  'reasoning',
]);

async function* fromArray<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}

export class GeminiProvider implements Provider {
  readonly type = 'gemini' as const;
  /** Gemini rejects unknown fields: no caller extras are sent (extrasOf stays unset). */
  readonly honours = GEMINI_OPTIONS;
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly transport: UpstreamTransport;

  constructor(
    readonly name: string,
    readonly config: ProviderConfig,
  ) {
    this.baseUrl = (config.baseUrl ?? GEMINI_DEFAULT_BASE_URL).replace(/\/+$/, '');
    // Built once: the key goes in the x-goog-api-key header (never the URL, which proxies may log).
    this.headers = { 'content-type': 'application/json', ...(config.headers ?? {}) };
    if (config.apiKey) this.headers['x-goog-api-key'] = config.apiKey;
    this.transport = new UpstreamTransport(name, config, { mapError: geminiErrorMapper(name) });
  }

  private post(request: GeminiRequest, upstreamModel: string, method: string, options: CallOptions): Promise<UpstreamResponse> {
    const body = JSON.stringify(request);
    return this.transport.send({
      url: `${this.baseUrl}/${geminiModelPath(upstreamModel)}:${method}`,
      method: 'POST',
      headers: this.headers,
      body,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  async generate(request: ModelRequest, upstreamModel: string, options: CallOptions): Promise<ModelResponse> {
    const response = await this.post(convertModelRequestToGemini(request), upstreamModel, 'generateContent', options);
    const reply = await response.json();
    if (reply === null || typeof reply !== 'object') {
      throw new GatewayError('upstream_error', `Upstream provider ${this.name} sent an empty reply.`);
    }
    return assembleResponse(fromArray(geminiReplyToParts(reply as GeminiResponse, upstreamModel)));
  }

  async *stream(request: ModelRequest, upstreamModel: string, options: CallOptions): AsyncIterable<StreamPart> {
    const response = await this.post(convertModelRequestToGemini(request), upstreamModel, 'streamGenerateContent?alt=sse', options);
    yield* geminiStreamToParts(this.events(response), upstreamModel);
  }

  private async *events(response: UpstreamResponse): AsyncIterable<GeminiResponse> {
    for await (const event of parseSse(response.body)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch (err) {
        throw new GatewayError('upstream_error', `Upstream provider ${this.name} sent a stream event that is not JSON.`, {
          cause: withheld(err, 'a stream event did not parse as JSON'),
          wireCode: 'stream_error',
        });
      }
      if (parsed !== null && typeof parsed === 'object') yield parsed as GeminiResponse;
    }
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}
