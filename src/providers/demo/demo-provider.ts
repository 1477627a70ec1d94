// The offline `demo` provider (operator contract): answers deterministically from the request itself,
// streaming too (word by word), and answers a `step_verdict` judge request with a parsable verdict.
// It never produces tool calls. On the canonical path it reads only the messages and the response
// format; every other option is accepted and has no effect (there is no model to apply it to), so it
// lists every option as honoured rather than report them dropped.
import { createHash } from 'node:crypto';
import { responseToParts } from '../../canonical/assemble';
import type { ModelRequest, ModelResponse, OptionName, StreamPart } from '../../canonical/model';
import type { ProviderConfig } from '../../config/types';
import type { CallOptions, ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatMessage, Provider } from '../types';
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

function textOf(message: ChatMessage | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content)) {
    return message.content
      .map((part) => (typeof part['text'] === 'string' ? part['text'] : ''))
      .filter(Boolean)
      .join(' ');
  }
  return '';
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** The deterministic reply text for a request. */
export function demoReply(request: ChatCompletionRequest): string {
  const format = request['response_format'] as { type?: string; json_schema?: { name?: string } } | undefined;
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  const prompt = textOf(lastUser).replace(/\s+/g, ' ').trim();
  if (format?.type === 'json_schema' && format.json_schema?.name === 'step_verdict') {
    // Judge request: the objective passes when the step produced any output.
    const produced = /output:\s*\S/i.test(prompt) || prompt.length > 0;
    return JSON.stringify({
      verdict: produced ? 'pass' : 'fail',
      explanation: produced ? 'The demo judge found output for the objective.' : 'The step produced no output.',
    });
  }
  const excerpt = prompt.length > 200 ? `${prompt.slice(0, 200)}…` : prompt;
  const reply = `Demo reply to: ${excerpt || '(no user text)'}`;
  if (format?.type === 'json_object' || format?.type === 'json_schema') return JSON.stringify({ reply });
  return reply;
}

export class DemoProvider implements Provider {
  readonly type = 'demo' as const;
  readonly honours: ReadonlySet<OptionName> = new Set(Object.keys(EVERY_OPTION) as OptionName[]);

  constructor(
    readonly name: string,
    readonly config: ProviderConfig,
  ) {}

  private ids(request: ChatCompletionRequest): { id: string; created: number } {
    const digest = createHash('sha256').update(JSON.stringify(request.messages)).digest('hex').slice(0, 24);
    return { id: `chatcmpl-demo${digest}`, created: 1_700_000_000 };
  }

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

  async chat(request: ChatCompletionRequest, upstreamModel: string, _options: CallOptions): Promise<ChatCompletion> {
    const text = demoReply(request);
    const prompt = request.messages.map(textOf).join(' ');
    const { id, created } = this.ids(request);
    const usage = { prompt_tokens: estimateTokens(prompt), completion_tokens: estimateTokens(text), total_tokens: 0 };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    return {
      id,
      object: 'chat.completion',
      created,
      model: upstreamModel,
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage,
    };
  }

  async *chatStream(request: ChatCompletionRequest, upstreamModel: string, options: CallOptions): AsyncIterable<ChatCompletionChunk> {
    const full = await this.chat(request, upstreamModel, options);
    const text = full.choices[0]?.message.content ?? '';
    const base = { id: full.id, object: 'chat.completion.chunk' as const, created: full.created, model: upstreamModel };
    yield { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] };
    for (const piece of text.match(/\S+\s*|\s+/g) ?? []) {
      if (options.signal?.aborted) return;
      yield { ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] };
    }
    yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: full.usage ?? null };
  }

  async close(): Promise<void> {}
}
