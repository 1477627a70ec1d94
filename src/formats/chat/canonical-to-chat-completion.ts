// A canonical reply → the chat completion object a chat completions caller gets from a translated
// provider (https://platform.openai.com/docs/api-reference/chat/object).
//
// `content` is the text parts joined, or null when the reply has no text part (a reply of tool calls
// only, as OpenAI answers); refusal parts go joined in `refusal` instead. Reasoning text goes in `reasoning_content`, the field DeepSeek, vLLM and
// LiteLLM use and the gateway has always filled; Anthropic signatures and redacted thinking are not
// on the chat wire. A signature-only reasoning part right before a tool call (how a Gemini thought
// signature arrives) goes on that call as `extra_content.google.thought_signature`, Google's own
// OpenAI-format field, which clients send back with the call. Native parts have no chat form and are
// left out.
import type { ModelResponse } from '../../canonical/model';
import { chatCompletionId, chatFinishReason, chatUsage, signatureOnly } from './chat-reply-fields';
import type { ChatCompletion, ChatCompletionMessage, ChatToolCall } from './chat-wire-types';

/** `model` is the caller's model id (echoed, as OpenAI does), not the upstream's name. */
export function canonicalToChatCompletion(response: ModelResponse, model: string, now: () => number = Date.now): ChatCompletion {
  let text: string | null = null;
  let refusal: string | null = null;
  let reasoning = '';
  const toolCalls: ChatToolCall[] = [];
  let signature: string | undefined;
  for (const part of response.content) {
    const pending = signature;
    signature = undefined;
    switch (part.type) {
      case 'text':
        if (part.refusal === true) refusal = (refusal ?? '') + part.text;
        else text = (text ?? '') + part.text;
        break;
      case 'reasoning':
        reasoning += part.text;
        if (signatureOnly(part)) signature = part.signature;
        break;
      case 'tool-call': {
        const call: ChatToolCall = { id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } };
        if (pending !== undefined) call.extra_content = { google: { thought_signature: pending } };
        toolCalls.push(call);
        break;
      }
      case 'native':
        break;
    }
  }
  const message: ChatCompletionMessage = { role: 'assistant', content: text, refusal };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning !== '') message.reasoning_content = reasoning;
  return {
    id: chatCompletionId(response.id),
    object: 'chat.completion',
    created: response.created > 0 ? response.created : Math.floor(now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: chatFinishReason(response.finishReason, toolCalls.length > 0), logprobs: null }],
    usage: chatUsage(response.usage),
  };
}
