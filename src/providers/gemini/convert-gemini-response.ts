// A Gemini GenerateContentResponse to a chat completion: one choice per candidate, answer text from
// the non-thought text parts, function calls as tool calls with generated ids and JSON-string
// arguments (the thought signature travelling in `extra_content.google`), finish reason and usage.
import { randomBytes } from 'node:crypto';
import type { ChatCompletion, ChatToolCall } from '../types';
import { convertGeminiUsage } from './convert-gemini-usage';
import type { GeminiCandidate, GeminiFunctionCall, GeminiResponse } from './gemini-wire-types';
import { mapGeminiFinishReason } from './map-gemini-finish-reason';

/** A chat tool call plus Google's extension field carrying the thought signature. */
export type GeminiChatToolCall = ChatToolCall & { extra_content?: { google: { thought_signature: string } } };

export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

export function newCompletionId(responseId: string | undefined): string {
  return `chatcmpl-${responseId ?? randomBytes(12).toString('hex')}`;
}

export function toChatToolCall(call: GeminiFunctionCall, thoughtSignature: string | undefined): GeminiChatToolCall {
  const toolCall: GeminiChatToolCall = {
    id: call.id ?? newToolCallId(),
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
  };
  if (thoughtSignature) toolCall.extra_content = { google: { thought_signature: thoughtSignature } };
  return toolCall;
}

function convertLogprobs(candidate: GeminiCandidate): unknown {
  const result = candidate.logprobsResult;
  if (!result?.chosenCandidates) return null;
  return {
    content: result.chosenCandidates.map((chosen, index) => ({
      token: chosen.token ?? '',
      logprob: chosen.logProbability ?? 0,
      bytes: null,
      top_logprobs: (result.topCandidates?.[index]?.candidates ?? []).map((top) => ({
        token: top.token ?? '',
        logprob: top.logProbability ?? 0,
        bytes: null,
      })),
    })),
    refusal: null,
  };
}

type Choice = ChatCompletion['choices'][number];

function convertCandidate(candidate: GeminiCandidate, position: number): Choice {
  let text = '';
  let sawText = false;
  const toolCalls: GeminiChatToolCall[] = [];
  for (const part of candidate.content?.parts ?? []) {
    if (part.thought === true) continue;
    if (typeof part.text === 'string') {
      text += part.text;
      sawText = true;
    }
    if (part.functionCall) toolCalls.push(toChatToolCall(part.functionCall, part.thoughtSignature));
  }
  const message: Choice['message'] = { role: 'assistant', content: sawText && text.length > 0 ? text : toolCalls.length > 0 ? null : text, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const choice: Choice = {
    index: candidate.index ?? position,
    message,
    finish_reason: mapGeminiFinishReason(candidate.finishReason, toolCalls.length > 0),
    logprobs: convertLogprobs(candidate),
  };
  return choice;
}

export function convertGeminiResponse(response: GeminiResponse, model: string, created = Math.floor(Date.now() / 1000)): ChatCompletion {
  const candidates = response.candidates ?? [];
  const choices = candidates.map(convertCandidate);
  if (choices.length === 0) {
    // The prompt itself was blocked (promptFeedback.blockReason): no candidate at all.
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      finish_reason: response.promptFeedback?.blockReason ? 'content_filter' : 'stop',
      logprobs: null,
    });
  }
  const completion: ChatCompletion = {
    id: newCompletionId(response.responseId),
    object: 'chat.completion',
    created,
    model,
    choices,
  };
  const usage = convertGeminiUsage(response.usageMetadata);
  if (usage) completion.usage = usage;
  return completion;
}
