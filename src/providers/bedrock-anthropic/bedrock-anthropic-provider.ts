// Anthropic models on Amazon Bedrock: InvokeModel / InvokeModelWithResponseStream
// (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html).
// The body is the Messages body with `anthropic_version: "bedrock-2023-05-31"` and without `model`
// (it is in the path) or `stream` (the operation decides); requests are SigV4-signed (service
// `bedrock`); a streamed reply is AWS event-stream framing whose `chunk` events carry each Anthropic
// event as base64 JSON in `bytes`.
import type { OptionName } from '../../canonical/model';
import type { ProviderConfig } from '../../config/types';
import { GatewayError } from '../../http/errors';
import { AnthropicFamilyProvider } from '../anthropic/anthropic-family-provider';
import type { AnthropicHosting } from '../anthropic/anthropic-hosting';
import type { AnthropicMessagesBody, AnthropicStreamEvent } from '../anthropic/anthropic-wire-types';
import type { UpstreamRequest } from '../http/transport';
import { withheld } from '../http/upstream-errors';
import { decodeAwsEventStream } from './decode-aws-event-stream';
import { encodeRfc3986, signAwsRequest, type AwsCredentials } from './sign-aws-sigv4';

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';
const SIGNING_SERVICE = 'bedrock';

export class BedrockAnthropicHosting implements AnthropicHosting {
  private readonly baseUrl: string;
  private readonly region: string;
  private readonly credentials: AwsCredentials;
  private readonly extraHeaders: Record<string, string>;
  /** `metadata` (the end-user id) is removed in prepare(): Bedrock refuses it. */
  readonly unsentOptions: readonly OptionName[] = ['user'];

  constructor(
    name: string,
    config: ProviderConfig,
    private readonly now: () => Date = () => new Date(),
  ) {
    if (!config.region || !config.accessKeyId || !config.secretAccessKey) {
      throw new Error(`providers.${name}: a bedrock-anthropic provider needs region, accessKeyId and secretAccessKey`);
    }
    this.region = config.region;
    this.credentials = {
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      ...(config.sessionToken ? { sessionToken: config.sessionToken } : {}),
    };
    this.baseUrl = (config.baseUrl ?? `https://bedrock-runtime.${config.region}.amazonaws.com`).replace(/\/+$/, '');
    this.extraHeaders = {};
    for (const [key, value] of Object.entries(config.headers ?? {})) this.extraHeaders[key.toLowerCase()] = value;
  }

  prepare(body: AnthropicMessagesBody, upstreamModel: string, stream: boolean): Promise<UpstreamRequest> {
    // Bedrock rejects keys it does not know ("extraneous key [metadata] is not permitted").
    const { metadata: _metadata, model: _model, stream: _stream, ...rest } = body;
    const payload = JSON.stringify({ anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest });
    const url = new URL(`${this.baseUrl}/model/${encodeRfc3986(upstreamModel)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`);
    const headers = signAwsRequest({
      method: 'POST',
      url,
      headers: {
        ...this.extraHeaders,
        'content-type': 'application/json',
        accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json',
      },
      body: payload,
      region: this.region,
      service: SIGNING_SERVICE,
      credentials: this.credentials,
      now: this.now(),
    });
    return Promise.resolve({ url: url.toString(), method: 'POST', headers, body: payload });
  }

  async *events(body: AsyncIterable<Buffer>): AsyncIterable<AnthropicStreamEvent> {
    for await (const message of decodeAwsEventStream(body)) {
      const messageType = message.headers[':message-type'];
      if (messageType === 'exception' || messageType === 'error') {
        const kind = String(message.headers[':exception-type'] ?? message.headers[':error-code'] ?? 'exception');
        let detail = message.payload.toString('utf8');
        try {
          const parsed = JSON.parse(detail) as { message?: unknown; Message?: unknown };
          const text = parsed.message ?? parsed.Message;
          if (typeof text === 'string') detail = text;
        } catch {
          // keep the raw payload text
        }
        throw new GatewayError('upstream_error', `The upstream stream failed (${kind}): ${detail}`);
      }
      if (message.headers[':event-type'] !== 'chunk') continue;
      let event: unknown;
      try {
        const wrapper = JSON.parse(message.payload.toString('utf8')) as { bytes?: unknown };
        if (typeof wrapper.bytes !== 'string') continue;
        event = JSON.parse(Buffer.from(wrapper.bytes, 'base64').toString('utf8'));
      } catch (err) {
        throw new GatewayError('upstream_error', 'The upstream stream sent a chunk that is not base64 JSON.', {
          cause: withheld(err, 'a stream chunk did not parse as base64 JSON'),
        });
      }
      if (typeof event === 'object' && event !== null && typeof (event as { type?: unknown }).type === 'string') yield event as AnthropicStreamEvent;
    }
  }
}

export function createBedrockAnthropicProvider(name: string, config: ProviderConfig, now?: () => Date): AnthropicFamilyProvider {
  return new AnthropicFamilyProvider(name, 'bedrock-anthropic', config, new BedrockAnthropicHosting(name, config, now));
}
