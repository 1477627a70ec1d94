// The offline `demo` provider (operator contract): answers deterministically from the request itself,
// streaming too (word by word), and answers a `step_verdict` judge request with a parsable verdict.
// It never produces tool calls. On the canonical path it reads only the messages and the response
// format; every other option is accepted and has no effect (there is no model to apply it to), so it
// lists every option as honoured rather than report them dropped.
import { createHash } from 'node:crypto';
import { responseToParts } from '../../canonical/assemble';
import type { ModelRequest, ModelResponse, OptionName, StreamPart } from '../../canonical/model';
import type { ProviderConfig } from '../../config/types';
import type { CallOptions, Provider } from '../types';
import { demoMessageText, demoModelReply, demoTokens } from './demo-model-reply';

/** Every canonical option, listed through a record so that a new option cannot be missed. */
const EVERY_OPTION: Readonly<Record<OptionName, true>> = {
  maxOutputTokens: true,
  temperature: true,
  topP: true,
  topK: true,
  stop: true,
  seed: true,
  presencePenalty: true,
  frequencyPenalty: true,
  n: true,
  logprobs: true,
  topLogprobs: true,
  responseFormat: true,
  reasoning: true,
  parallelToolCalls: true,
  user: true,
  verbosity: true,
  serviceTier: true,
  promptCacheKey: true,
};

/** Words with their trailing space, so the pieces join back to the text. */
const words = (text: string): string[] => text.match(/\S+\s*|\s+/g) ?? [];

export class DemoProvider implements Provider {
  readonly type = 'demo' as const;
  readonly honours: ReadonlySet<OptionName> = new Set(Object.keys(EVERY_OPTION) as OptionName[]);
  readonly strictTools = true;

  constructor(
    readonly name: string,
    readonly config: ProviderConfig,
  ) {}

  async generate(request: ModelRequest, upstreamModel: string, _options: CallOptions): Promise<ModelResponse> {
    const text = demoModelReply(request);
    const digest = createHash('sha256').update(JSON.stringify(request.messages)).digest('hex').slice(0, 24);
    return {
      id: `demo-${digest}`,
      model: upstreamModel,
      created: 1_700_000_000,
      content: [{ type: 'text', text }],
      finishReason: 'stop',
      usage: { inputTokens: demoTokens(request.messages.map(demoMessageText).join(' ')), outputTokens: demoTokens(text) },
    };
  }

  async *stream(request: ModelRequest, upstreamModel: string, options: CallOptions): AsyncIterable<StreamPart> {
    const response = await this.generate(request, upstreamModel, options);
    for (const part of responseToParts(response, words)) {
      // A caller that went away ends the stream with the abort, not with a finish it would not read.
      options.signal?.throwIfAborted();
      yield part;
    }
  }

  async close(): Promise<void> {}
}
