// Gemini GenerateContentResponses (a whole reply, or each event of `:streamGenerateContent?alt=sse`,
// a partial one) to canonical stream parts. One state object per call (GeminiReplyState); a whole
// reply is pushed once and folded (generate), so both paths give the same answer. Only candidate 0 is
// read (the canonical reply has one).
// - thought parts (`thought: true`) fill a reasoning block; answer text fills a text block; each block
//   is closed when a part of another kind arrives, so the reply keeps Gemini's order;
// - a functionCall part is a whole tool call (Gemini never splits one): start, all its arguments as
//   one delta, end; its id is Gemini's when given, else generated;
// - a thoughtSignature (Gemini 3 requires it back with the function call it came on) becomes the
//   signature of a reasoning block just before the part that carried it (or of the thought block it
//   closes), which convert-model-messages-to-gemini.ts puts back on the following part;
// - finish reason and the last (cumulative) usage are held until the reply ends: one `finish`.
// A stream that ends before a finish reason, or carries an error object, fails loudly instead of
// looking like a complete answer. A blocked prompt (no candidate, promptFeedback.blockReason) is a
// well-formed empty answer that finished with content_filter.
import { randomBytes } from 'node:crypto';
import { NO_USAGE, type FinishReason, type StreamPart, type Usage } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import type { GeminiPart, GeminiResponse, GeminiUsageMetadata } from './gemini-wire-types';

export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/** Thinking tokens are output (as OpenAI counts reasoning inside completion tokens); tool-use prompt tokens are input. */
export function convertGeminiUsageToCanonical(usage: GeminiUsageMetadata | undefined): Usage {
  const out: Usage = {
    inputTokens: (usage?.promptTokenCount ?? 0) + (usage?.toolUsePromptTokenCount ?? 0),
    outputTokens: (usage?.candidatesTokenCount ?? 0) + (usage?.thoughtsTokenCount ?? 0),
  };
  if (usage?.cachedContentTokenCount !== undefined) out.cachedInputTokens = usage.cachedContentTokenCount;
  if (usage?.thoughtsTokenCount !== undefined) out.reasoningTokens = usage.thoughtsTokenCount;
  return out;
}

/** Reasons for which Gemini withheld or cut content on policy grounds. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);
/** The model produced a call it should not have, or a malformed one. */
const FAILED = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']);

/** Gemini answers STOP when the model called a function, so a reply with calls is `tool_calls` whatever it says. */
export function mapGeminiFinishReasonToCanonical(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason !== undefined && FILTERED.has(reason)) return 'content_filter';
  if (reason !== undefined && FAILED.has(reason)) return 'error';
  if (hasToolCalls) return 'tool_calls';
  if (reason === 'STOP' || reason === undefined) return 'stop';
  // OTHER, LANGUAGE, FINISH_REASON_UNSPECIFIED and values yet unknown.
  return 'other';
}

export class GeminiReplyState {
  private started = false;
  private blocks = 0;
  private textBlock: string | undefined;
  private reasoningBlock: string | undefined;
  private toolCalls = 0;
  private sawCandidate = false;
  private finishReason: string | undefined;
  private usage: Usage | undefined;
  private blockReason: string | undefined;

  constructor(
    private readonly upstreamModel: string,
    private readonly created = Math.floor(Date.now() / 1000),
  ) {}

  private nextBlockId(): string {
    return `b${this.blocks++}`;
  }

  private start(out: StreamPart[], event: GeminiResponse | undefined): void {
    if (this.started) return;
    this.started = true;
    out.push({
      type: 'start',
      id: event?.responseId ?? randomBytes(12).toString('hex'),
      model: event?.modelVersion ?? this.upstreamModel,
      created: this.created,
    });
  }

  /** The parts for one reply (or stream event). */
  push(event: GeminiResponse): StreamPart[] {
    if (event.error) {
      throw new GatewayError('upstream_error', event.error.message ?? 'The Gemini stream reported an error.', { wireCode: 'stream_error' });
    }
    const out: StreamPart[] = [];
    this.start(out, event);
    if (event.usageMetadata) this.usage = convertGeminiUsageToCanonical(event.usageMetadata);
    if (event.promptFeedback?.blockReason) this.blockReason = event.promptFeedback.blockReason;
    const candidates = event.candidates ?? [];
    const candidate = candidates.find((entry, position) => (entry.index ?? position) === 0);
    if (candidate === undefined) return out;
    this.sawCandidate = true;
    for (const part of candidate.content?.parts ?? []) this.pushPart(part, out);
    if (candidate.finishReason) this.finishReason = candidate.finishReason;
    return out;
  }

  private pushPart(part: GeminiPart, out: StreamPart[]): void {
    const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
    if (part.thought === true) {
      this.closeText(out);
      if (this.reasoningBlock === undefined) {
        this.reasoningBlock = this.nextBlockId();
        out.push({ type: 'reasoning-start', id: this.reasoningBlock });
      }
      if (typeof part.text === 'string' && part.text !== '') out.push({ type: 'reasoning-delta', id: this.reasoningBlock, delta: part.text });
      if (signature !== undefined) this.closeReasoning(out, signature);
      return;
    }
    if (part.functionCall) {
      this.closeText(out);
      this.closeReasoning(out);
      if (signature !== undefined) this.signatureBlock(out, signature);
      const id = this.nextBlockId();
      this.toolCalls += 1;
      out.push({ type: 'tool-call-start', id, callId: part.functionCall.id ?? newToolCallId(), name: part.functionCall.name });
      out.push({ type: 'tool-call-delta', id, delta: JSON.stringify(part.functionCall.args ?? {}) });
      out.push({ type: 'tool-call-end', id });
      return;
    }
    if (typeof part.text === 'string') {
      this.closeReasoning(out);
      // A signature on answer text (Gemini signs the last part of a reply without calls) is kept too;
      // the text block stays open around it.
      if (signature !== undefined) this.signatureBlock(out, signature);
      if (part.text === '') return;
      if (this.textBlock === undefined) {
        this.textBlock = this.nextBlockId();
        out.push({ type: 'text-start', id: this.textBlock });
      }
      out.push({ type: 'text-delta', id: this.textBlock, delta: part.text });
    }
    // inlineData / executableCode / codeExecutionResult parts of the reply have no canonical form yet.
  }

  /** An empty reasoning block that carries only a thought signature. */
  private signatureBlock(out: StreamPart[], signature: string): void {
    const id = this.nextBlockId();
    out.push({ type: 'reasoning-start', id });
    out.push({ type: 'reasoning-end', id, signature });
  }

  private closeText(out: StreamPart[]): void {
    if (this.textBlock === undefined) return;
    out.push({ type: 'text-end', id: this.textBlock });
    this.textBlock = undefined;
  }

  private closeReasoning(out: StreamPart[], signature?: string): void {
    if (this.reasoningBlock === undefined) return;
    out.push(signature !== undefined ? { type: 'reasoning-end', id: this.reasoningBlock, signature } : { type: 'reasoning-end', id: this.reasoningBlock });
    this.reasoningBlock = undefined;
  }

  /**
   * The closing parts once the reply has ended. `streamed`: a stream that ended without a finish
   * reason was cut, which throws; a whole reply without one answers `stop`.
   */
  finish(streamed: boolean): StreamPart[] {
    const out: StreamPart[] = [];
    this.start(out, undefined);
    if (!this.sawCandidate && this.blockReason) {
      // The prompt was blocked: no candidate, but a well-formed (filtered) answer.
      out.push({ type: 'finish', finishReason: 'content_filter', rawFinishReason: this.blockReason, usage: this.usage ?? { ...NO_USAGE } });
      return out;
    }
    if (streamed && this.finishReason === undefined) {
      throw new GatewayError('upstream_error', 'The Gemini stream ended before the answer was complete.', { wireCode: 'stream_error' });
    }
    this.closeText(out);
    this.closeReasoning(out);
    const finish: StreamPart = {
      type: 'finish',
      finishReason: mapGeminiFinishReasonToCanonical(this.finishReason, this.toolCalls > 0),
      usage: this.usage ?? { ...NO_USAGE },
    };
    if (this.finishReason !== undefined) finish.rawFinishReason = this.finishReason;
    out.push(finish);
    return out;
  }
}

/** Translates a stream of parsed Gemini events into canonical stream parts. */
export async function* geminiStreamToParts(events: AsyncIterable<GeminiResponse>, upstreamModel: string): AsyncIterable<StreamPart> {
  const state = new GeminiReplyState(upstreamModel);
  for await (const event of events) yield* state.push(event);
  yield* state.finish(true);
}

/** The parts of a whole generateContent reply. */
export function geminiReplyToParts(reply: GeminiResponse, upstreamModel: string): StreamPart[] {
  const state = new GeminiReplyState(upstreamModel);
  return [...state.push(reply), ...state.finish(false)];
}
