// A chat-completions reply to a canonical ModelResponse: the first choice only (the canonical reply
// has one), its reasoning (`reasoning_content` of DeepSeek and older vLLM, `reasoning` of newer vLLM,
// Ollama and OpenRouter) first, then its text, then its tool calls. A refusal is a text part of its own
// marked `refusal`, after any text, so that a format with a refusal of its own shows it as one.
import { randomBytes } from 'node:crypto';
import type { AssistantPart, ModelResponse } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { convertOpenAiChatUsage } from './convert-openai-chat-usage';
import { mapOpenAiFinishReason } from './map-openai-finish-reason';
import type { OpenAiChatCompletion, OpenAiChatReplyMessage } from './openai-chat-wire-types';

/** For a tool call an OpenAI-compatible server sent without an id. */
export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/** The reasoning text of a message or delta, whichever of the two field names the server uses. */
export function reasoningOf(message: Pick<OpenAiChatReplyMessage, 'reasoning_content' | 'reasoning'>): string {
  if (typeof message.reasoning_content === 'string') return message.reasoning_content;
  return typeof message.reasoning === 'string' ? message.reasoning : '';
}

/** The error message of an `{error: ...}` body, or undefined when there is none. */
export function errorMessageOf(error: OpenAiChatCompletion['error']): string | undefined {
  if (error === undefined || error === null) return undefined;
  if (typeof error === 'string') return error;
  return typeof error.message === 'string' ? error.message : 'unknown error';
}

function textOf(content: OpenAiChatReplyMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

export function convertOpenAiChatCompletion(reply: OpenAiChatCompletion, providerName: string, upstreamModel: string): ModelResponse {
  const failure = errorMessageOf(reply.error);
  if (failure !== undefined) throw new GatewayError('upstream_error', `Upstream provider ${providerName} failed: ${failure}`);
  const choices = Array.isArray(reply.choices) ? reply.choices : [];
  const choice = choices.find((entry) => entry.index === 0) ?? choices[0];
  if (choice === undefined) throw new GatewayError('upstream_error', `Upstream provider ${providerName} sent a reply without a choice.`);
  const message = choice.message ?? {};
  const content: AssistantPart[] = [];
  const reasoning = reasoningOf(message);
  if (reasoning !== '') content.push({ type: 'reasoning', text: reasoning });
  const text = textOf(message.content);
  if (text !== '') content.push({ type: 'text', text });
  if (typeof message.refusal === 'string' && message.refusal !== '') content.push({ type: 'text', text: message.refusal, refusal: true });
  for (const call of message.tool_calls ?? []) {
    // A call of another tool type (a `custom` tool the caller declared natively) goes back as it came.
    if (call.type !== undefined && call.type !== 'function') {
      content.push({ type: 'native', format: 'chat', value: { ...call } });
      continue;
    }
    content.push({ type: 'tool-call', id: call.id ?? newToolCallId(), name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' });
  }
  return {
    id: reply.id ?? '',
    model: reply.model ?? upstreamModel,
    created: reply.created ?? Math.floor(Date.now() / 1000),
    content,
    ...mapOpenAiFinishReason(choice.finish_reason),
    usage: convertOpenAiChatUsage(reply.usage),
  };
}
