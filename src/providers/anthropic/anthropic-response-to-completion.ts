// Anthropic message (non-streaming reply) → ChatCompletion.
import type { ChatCompletion, ChatToolCall } from '../types';
import { jsonToolInputToContent, type JsonToolPlan } from './anthropic-json-mode';
import type { AnthropicMessage, AnthropicThinkingBlock, AnthropicToolUseBlock } from './anthropic-wire-types';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason';
import { mapAnthropicUsage } from './map-anthropic-usage';

export interface ReplyContext {
  /** The model id the caller asked for (echoed in the completion). */
  model: string;
  jsonTool: JsonToolPlan | null;
  now?: () => number;
}

export function anthropicResponseToCompletion(message: AnthropicMessage, context: ReplyContext): ChatCompletion {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  let jsonContent: string | null = null;
  for (const block of Array.isArray(message.content) ? message.content : []) {
    if (block.type === 'text' && typeof block['text'] === 'string') texts.push(block['text']);
    else if (block.type === 'thinking') reasoning.push((block as AnthropicThinkingBlock).thinking ?? '');
    else if (block.type === 'tool_use') {
      const use = block as AnthropicToolUseBlock;
      if (context.jsonTool && use.name === context.jsonTool.name) {
        jsonContent = jsonToolInputToContent(use.input, context.jsonTool);
      } else {
        toolCalls.push({ id: use.id, type: 'function', function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) } });
      }
    }
  }
  // When the JSON tool was used the content is its input alone: no prose around it (rule 4).
  const content = jsonContent ?? (texts.length > 0 ? texts.join('') : null);
  let finish = mapAnthropicStopReason(message.stop_reason);
  if (jsonContent !== null && toolCalls.length === 0 && finish === 'tool_calls') finish = 'stop';
  const choiceMessage: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content, refusal: null };
  if (toolCalls.length > 0) choiceMessage.tool_calls = toolCalls;
  if (reasoning.length > 0) choiceMessage['reasoning_content'] = reasoning.join('');
  return {
    id: message.id,
    object: 'chat.completion',
    created: Math.floor((context.now ?? Date.now)() / 1000),
    model: context.model,
    choices: [{ index: 0, message: choiceMessage, finish_reason: finish, logprobs: null }],
    usage: mapAnthropicUsage(message.usage),
  };
}
