// Client format POST /v1/messages: an Anthropic Messages request → the canonical chat-completions
// request, so that every provider can serve it. Pure (new objects; the caller's body is not changed).
//
// Anthropic-only content survives the round trip to an Anthropic-family provider: blocks with no
// chat-completions equivalent (documents, redacted thinking, server tool blocks) ride along as content
// parts of their own type, assistant thinking blocks as the `thinking_blocks` message extension,
// tool_result errors as `is_error` on the tool message, and `thinking` / `top_k` as request fields;
// providers/anthropic/convert-to-anthropic-messages.ts reads them all back.
import { GatewayError } from '../../http/errors';
import type {
  AnthropicContentBlock,
  AnthropicImageSource,
  AnthropicMessageParam,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
} from '../../providers/anthropic/anthropic-wire-types';
import type { ChatCompletionRequest, ChatMessage, ChatToolCall, JsonObject } from '../../providers/types';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function badRequest(message: string, param: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

function imageSourceToUrl(source: unknown, param: string): string {
  if (!isRecord(source)) throw badRequest('Image blocks need a source.', param);
  const typed = source as AnthropicImageSource;
  if (typed.type === 'base64' && typeof typed.data === 'string' && typeof typed.media_type === 'string') {
    return `data:${typed.media_type};base64,${typed.data}`;
  }
  if (typed.type === 'url' && typeof typed.url === 'string') return typed.url;
  throw badRequest('Image sources must be base64 or url.', param);
}

/** A user-side block → a chat content part (text and images mapped; other blocks carried as they are). */
function blockToPart(block: AnthropicContentBlock, param: string): JsonObject {
  if (block.type === 'text') {
    const part: JsonObject = { type: 'text', text: typeof block['text'] === 'string' ? block['text'] : '' };
    if (block['cache_control'] !== undefined) part['cache_control'] = block['cache_control'];
    return part;
  }
  if (block.type === 'image') return { type: 'image_url', image_url: { url: imageSourceToUrl(block['source'], `${param}.source`) } };
  return { ...block };
}

function toolResultMessage(block: AnthropicToolResultBlock, param: string): ChatMessage {
  const message: ChatMessage = { role: 'tool', tool_call_id: block.tool_use_id, content: '' };
  const content = block.content;
  if (typeof content === 'string') message.content = content;
  else if (Array.isArray(content)) {
    const parts = content.map((b, i) => blockToPart(b, `${param}.content[${i}]`));
    // All text: a plain string, the form every chat-completions upstream accepts for tool results.
    message.content = parts.every((p) => p['type'] === 'text' && p['cache_control'] === undefined) ? parts.map((p) => String(p['text'])).join('\n') : parts;
  }
  if (block.is_error === true) message['is_error'] = true;
  return message;
}

function userTurn(content: AnthropicMessageParam['content'], param: string): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: ChatMessage[] = [];
  const parts: JsonObject[] = [];
  content.forEach((block, i) => {
    if (block.type === 'tool_result') out.push(toolResultMessage(block as AnthropicToolResultBlock, `${param}[${i}]`));
    else parts.push(blockToPart(block, `${param}[${i}]`));
  });
  if (parts.length > 0) {
    const plain = parts.length === 1 && parts[0]?.['type'] === 'text' && parts[0]['cache_control'] === undefined;
    out.push({ role: 'user', content: plain ? String(parts[0]?.['text']) : parts });
  }
  return out;
}

function assistantTurn(content: AnthropicMessageParam['content']): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  const thinking: JsonObject[] = [];
  const other: JsonObject[] = [];
  for (const block of content) {
    if (block.type === 'text' && typeof block['text'] === 'string') texts.push(block['text']);
    else if (block.type === 'tool_use') {
      const use = block as AnthropicToolUseBlock;
      toolCalls.push({ id: use.id, type: 'function', function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) } });
    } else if (block.type === 'thinking' || block.type === 'redacted_thinking') thinking.push({ ...block });
    else other.push({ ...block });
  }
  const message: ChatMessage = {
    role: 'assistant',
    content: other.length > 0 ? [...texts.map((text) => ({ type: 'text', text })), ...other] : texts.length > 0 ? texts.join('') : null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (thinking.length > 0) message['thinking_blocks'] = thinking;
  return message;
}

function convertTools(tools: unknown): JsonObject[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  return tools.map((tool: unknown, i) => {
    if (!isRecord(tool) || typeof tool['name'] !== 'string') throw badRequest('Each tool needs a name.', `tools[${i}]`);
    // Client tools (no type, or "custom") become functions; server tools (web_search_…) ride along.
    if (tool['type'] !== undefined && tool['type'] !== 'custom') return { ...tool };
    const fn: JsonObject = { name: tool['name'], parameters: isRecord(tool['input_schema']) ? tool['input_schema'] : { type: 'object' } };
    if (typeof tool['description'] === 'string') fn['description'] = tool['description'];
    const converted: JsonObject = { type: 'function', function: fn };
    if (tool['cache_control'] !== undefined) converted['cache_control'] = tool['cache_control'];
    return converted;
  });
}

function convertToolChoice(choice: unknown, into: ChatCompletionRequest): void {
  if (!isRecord(choice)) return;
  switch (choice['type']) {
    case 'auto':
      into['tool_choice'] = 'auto';
      break;
    case 'any':
      into['tool_choice'] = 'required';
      break;
    case 'none':
      into['tool_choice'] = 'none';
      break;
    case 'tool':
      if (typeof choice['name'] !== 'string') throw badRequest('tool_choice of type "tool" needs a name.', 'tool_choice.name');
      into['tool_choice'] = { type: 'function', function: { name: choice['name'] } };
      break;
    default:
      throw badRequest('tool_choice.type must be auto, any, tool or none.', 'tool_choice.type');
  }
  if (choice['disable_parallel_tool_use'] === true) into['parallel_tool_calls'] = false;
}

/** Anthropic Messages request → canonical request. Expects a body already validated as an object. */
export function messagesRequestToChat(body: Record<string, unknown>): ChatCompletionRequest {
  if (typeof body['model'] !== 'string') throw badRequest('model is required.', 'model');
  if (!Array.isArray(body['messages'])) throw badRequest('messages must be an array.', 'messages');
  const messages: ChatMessage[] = [];

  const system = body['system'];
  if (typeof system === 'string') {
    if (system !== '') messages.push({ role: 'system', content: system });
  } else if (Array.isArray(system)) {
    const parts = system.map((b: unknown, i) => {
      if (!isRecord(b) || b['type'] !== 'text') throw badRequest('system blocks must be text blocks.', `system[${i}]`);
      return blockToPart(b as AnthropicContentBlock, `system[${i}]`);
    });
    const plain = parts.every((p) => p['cache_control'] === undefined);
    if (parts.length > 0) messages.push({ role: 'system', content: plain ? parts.map((p) => String(p['text'])).join('\n\n') : parts });
  }

  (body['messages'] as unknown[]).forEach((raw, i) => {
    const param = `messages[${i}]`;
    if (!isRecord(raw)) throw badRequest('Each message must be an object.', param);
    const content = raw['content'];
    if (typeof content !== 'string' && !Array.isArray(content)) throw badRequest('content must be a string or an array of blocks.', `${param}.content`);
    const typed = content as AnthropicMessageParam['content'];
    if (raw['role'] === 'user') messages.push(...userTurn(typed, `${param}.content`));
    else if (raw['role'] === 'assistant') messages.push(assistantTurn(typed));
    else throw badRequest('role must be "user" or "assistant" (the system prompt goes in "system").', `${param}.role`);
  });

  const request: ChatCompletionRequest = { model: body['model'], messages };
  if (typeof body['max_tokens'] === 'number') request['max_tokens'] = body['max_tokens'];
  if (Array.isArray(body['stop_sequences']) && body['stop_sequences'].length > 0) request['stop'] = body['stop_sequences'];
  for (const key of ['temperature', 'top_p', 'top_k'] as const) {
    if (typeof body[key] === 'number') request[key] = body[key];
  }
  if (body['stream'] === true) request.stream = true;
  const tools = convertTools(body['tools']);
  if (tools && tools.length > 0) request['tools'] = tools;
  convertToolChoice(body['tool_choice'], request);
  const metadata = body['metadata'];
  if (isRecord(metadata) && typeof metadata['user_id'] === 'string') request['user'] = metadata['user_id'];
  if (isRecord(body['thinking'])) request['thinking'] = body['thinking'];
  return request;
}
