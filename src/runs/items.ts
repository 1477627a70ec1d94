// Conversation items written by runs, shaped after OpenAI's conversation items: `data` holds what the
// API shows besides id/type/role/status (a message's `content` parts, a call's `call_id`/`name`/
// `arguments`, an output's `call_id`/`output`). Also the way back: items to chat messages.
import type { Message, ToolCallPart } from '../canonical/model';
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

export function functionCallItem(call: ToolCallPart, idempotencyKey: string): NewConversationItem {
  return {
    id: newItemId('fc'),
    type: 'function_call',
    role: null,
    data: { call_id: call.id, name: call.name, arguments: call.arguments },
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

/**
 * A server-side tool call's result as the run's conversation keeps it, shaped as Responses' output
 * item of the same call (the model's call itself is the function_call item before it): an `svc_call`
 * (hosted tool: name, arguments, output or error) or, when an MCP server ran it (`via`), an `mcp_call`
 * (server_label, the tool's own name, arguments, output or error). Both keep the `call_id` that pairs
 * them with their function_call.
 */
export function serverCallItem(
  call: ToolCallPart,
  result: { status: 'completed' | 'failed'; output: string },
  idempotencyKey: string,
  via?: { serverLabel: string; name: string },
): NewConversationItem {
  const outcome = { output: result.status === 'completed' ? result.output : null, error: result.status === 'failed' ? result.output : null };
  return {
    id: newItemId(via ? 'mcp' : 'sc'),
    type: via ? 'mcp_call' : 'svc_call',
    role: null,
    data: via
      ? { call_id: call.id, server_label: via.serverLabel, name: via.name, arguments: call.arguments, ...outcome }
      : { call_id: call.id, name: call.name, arguments: call.arguments, ...outcome },
    status: result.status,
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
 * The canonical history of a conversation: messages in order, an assistant's function calls folded
 * into its turn, outputs as tool turns (consecutive outputs in one).
 */
export function itemsToMessages(items: readonly ConversationItemRecord[]): Message[] {
  const messages: Message[] = [];
  for (const item of items) {
    const last = messages[messages.length - 1];
    if (item.type === 'message' && (item.role === 'system' || item.role === 'user' || item.role === 'assistant')) {
      const text = { type: 'text' as const, text: itemText(item) };
      messages.push(
        item.role === 'system'
          ? { role: 'system', content: [text] }
          : item.role === 'user'
            ? { role: 'user', content: [text] }
            : { role: 'assistant', content: [text] },
      );
    } else if (item.type === 'function_call') {
      const call: ToolCallPart = { type: 'tool-call', id: str(item.data['call_id']), name: str(item.data['name']), arguments: str(item.data['arguments']) };
      if (last?.role === 'assistant') last.content.push(call);
      else messages.push({ role: 'assistant', content: [call] });
    } else if (item.type === 'svc_call' || item.type === 'mcp_call') {
      // The result of a call the gateway ran: what the model was shown, an error as an error.
      const error = item.data['error'];
      const result =
        typeof error === 'string'
          ? { type: 'tool-result' as const, callId: str(item.data['call_id']), output: error, isError: true }
          : { type: 'tool-result' as const, callId: str(item.data['call_id']), output: str(item.data['output']) };
      if (last?.role === 'tool') last.content.push(result);
      else messages.push({ role: 'tool', content: [result] });
    } else if (item.type === 'function_call_output') {
      const result = { type: 'tool-result' as const, callId: str(item.data['call_id']), output: str(item.data['output']) };
      if (last?.role === 'tool') last.content.push(result);
      else messages.push({ role: 'tool', content: [result] });
    }
  }
  return messages;
}

/** The run's `result`: the JSON-encoded final assistant message, or null when it carried no text. */
export function runResult(text: string | null): string | null {
  if (text === null || text.length === 0) return null;
  return JSON.stringify({ role: 'assistant', parts: [{ type: 'text', text }] });
}
