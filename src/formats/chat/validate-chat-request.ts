// The chat-completions rules the route enforces itself (spec: chat message table, field table, rules
// 1-3), whatever the generated validator already checked: they are cheap and their messages name the
// offending field. Everything else passes through unvalidated (rule 1).
import { GatewayError } from '../../http/errors';
import type { ChatCompletionRequest } from '../../providers/types';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** The opt-in extension block lives only on the Responses interface (rule 3). */
export function rejectExtensions(body: Record<string, unknown>): void {
  if (body['svc'] !== undefined) {
    throw new GatewayError('unsupported_parameter', "The 'svc' opt-in block is only accepted on /v1/responses.", { param: 'svc' });
  }
}

function invalid(message: string, param: string): GatewayError {
  return new GatewayError('validation_failed', message, { param });
}

export function validateChatRequest(body: unknown): ChatCompletionRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('Invalid request: the body must be a JSON object.', 'body');
  const record = body as Record<string, unknown>;
  if (typeof record['model'] !== 'string' || record['model'] === '') throw invalid("Invalid request: 'model' is required and must be a string.", 'model');
  const messages = record['messages'];
  if (!Array.isArray(messages)) throw invalid("Invalid request: 'messages' is required and must be an array.", 'messages');
  if (messages.length === 0) throw invalid("Invalid request: 'messages' must contain at least 1 message.", 'messages');
  for (let i = 0; i < messages.length; i += 1) {
    const message: unknown = messages[i];
    if (message === null || typeof message !== 'object' || Array.isArray(message))
      throw invalid(`Invalid request: 'messages[${i}]' must be an object.`, `messages[${i}]`);
    const { role, content, tool_call_id: toolCallId } = message as Record<string, unknown>;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw invalid(`Invalid request: 'messages[${i}].role' must be one of system, developer, user, assistant, tool.`, `messages[${i}].role`);
    }
    if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
      throw invalid(`Invalid request: 'messages[${i}].content' must be a string, an array of content parts or null.`, `messages[${i}].content`);
    }
    if (role === 'tool' && (typeof toolCallId !== 'string' || toolCallId === '')) {
      throw invalid(`Invalid request: 'messages[${i}].tool_call_id' is required on tool messages.`, `messages[${i}].tool_call_id`);
    }
  }
  if (record['stream'] !== undefined && typeof record['stream'] !== 'boolean') throw invalid("Invalid request: 'stream' must be a boolean.", 'stream');
  rejectExtensions(record);
  return record as ChatCompletionRequest;
}
