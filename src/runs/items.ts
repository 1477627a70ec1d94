// Conversation items written by runs, shaped after OpenAI's conversation items: `data` holds what the
// API shows besides id/type/role/status (a message's `content` parts, a call's `call_id`/`name`/
// `arguments`, an output's `call_id`/`output`). Also the way back: items to chat messages.
import type { ChatMessage, ChatToolCall } from '../providers/types';
import type { ConversationItemRecord, NewConversationItem } from '../store/types';
import { newItemId } from './ids';

export type MessageRole = 'system' | 'user' | 'assistant';

export function messageItem(role: MessageRole, text: string, idempotencyKey: string): NewConversationItem {
  const part = role === 'assistant' ? { type: 'output_text', text, annotations: [] } : { type: 'input_text', text };
  return {
    id: newItemId('msg'),
    type: 'message',
    role,
    data: { content: [part] },
    status: 'completed',
    idempotencyKey,
    responseId: null,
  };
}

export function functionCallItem(call: ChatToolCall, idempotencyKey: string): NewConversationItem {
  return {
    id: newItemId('fc'),
    type: 'function_call',
    role: null,
    data: { call_id: call.id, name: call.function.name, arguments: call.function.arguments },
    status: 'completed',
    idempotencyKey,
    responseId: null,
  };
}

export function functionCallOutputItem(callId: string, output: string, idempotencyKey: string): NewConversationItem {
  return {
    id: newItemId('fco'),
    type: 'function_call_output',
    role: null,
    data: { call_id: callId, output },
    status: 'completed',
    idempotencyKey,
    responseId: null,
  };
}

/** The text of a message item's content parts, joined. */
export function itemText(item: Pick<ConversationItemRecord, 'data'>): string {
  const content = item.data['content'];
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => {
      const text = part !== null && typeof part === 'object' ? (part as Record<string, unknown>)['text'] : undefined;
      return typeof text === 'string' ? text : '';
    })
    .join('');
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * The chat-completions history of a conversation: messages in order, an assistant's function calls
 * folded into its `tool_calls`, outputs as `tool` messages.
 */
export function itemsToChatMessages(items: readonly ConversationItemRecord[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const item of items) {
    if (item.type === 'message' && (item.role === 'system' || item.role === 'user' || item.role === 'assistant')) {
      messages.push({ role: item.role, content: itemText(item) });
    } else if (item.type === 'function_call') {
      const call: ChatToolCall = {
        id: str(item.data['call_id']),
        type: 'function',
        function: { name: str(item.data['name']), arguments: str(item.data['arguments']) },
      };
      const last = messages[messages.length - 1];
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: str(item.data['call_id']), content: str(item.data['output']) });
    }
  }
  return messages;
}

/** The run's `result`: the JSON-encoded final assistant message, or null when it carried no text. */
export function runResult(text: string | null): string | null {
  if (text === null || text.length === 0) return null;
  return JSON.stringify({ role: 'assistant', parts: [{ type: 'text', text }] });
}
