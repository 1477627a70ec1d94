// POST /v1/messages body → the canonical request, for every provider that does not speak Messages
// itself (a Messages-speaking provider gets the caller's bytes). Pure: the caller's body is read, never
// changed. Fields with no canonical meaning go to `extra` (format 'messages'): a provider whose upstream
// speaks Messages (Bedrock, Vertex) sends them, any other drops them and the call reports them.
import type { JsonObject, Message, ModelRequest, TextPart, ToolChoice, ToolDefinition } from '../../canonical/model';
import { OptionsBuilder, type CanonicalRequest } from '../shared/canonical-request';
import { badRequest, isRecord, readString, readStringList, unknownFields } from '../shared/read-fields';
import { readSharedOptions } from '../shared/shared-option-fields';
import { readThinking } from '../shared/thinking-config';
import { assistantBlock, blockOf, textBlock, toolResultBlock, userBlock } from './messages-blocks-to-canonical';

const MAPPED_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'system',
  'stream',
  'tools',
  'tool_choice',
  'max_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'metadata',
  'thinking',
]);

/** The fields of a client tool the canonical function definition carries; a tool with more stays native. */
const FUNCTION_TOOL_FIELDS: ReadonlySet<string> = new Set(['type', 'name', 'description', 'input_schema', 'cache_control', 'strict']);

function systemMessage(system: unknown): Message | null {
  if (system === undefined || system === null) return null;
  let content: TextPart[];
  if (typeof system === 'string') content = system === '' ? [] : [{ type: 'text', text: system }];
  else if (Array.isArray(system)) {
    content = system.map((raw: unknown, i) => {
      const { block, type } = blockOf(raw, `system[${i}]`);
      if (type !== 'text') throw badRequest('system blocks must be text blocks.', `system[${i}].type`);
      return textBlock(block, `system[${i}]`);
    });
  } else throw badRequest('system must be a string or an array of text blocks.', 'system');
  return content.length > 0 ? { role: 'system', content } : null;
}

/** A user turn → its tool results (one canonical tool message, first, as Anthropic orders them) and the rest. */
function userTurn(content: unknown, param: string): Message[] {
  if (typeof content === 'string') return [{ role: 'user', content: content === '' ? [] : [{ type: 'text', text: content }] }];
  if (!Array.isArray(content)) throw badRequest('content must be a string or an array of blocks.', param);
  const results: Message & { role: 'tool' } = { role: 'tool', content: [] };
  const rest: Message & { role: 'user' } = { role: 'user', content: [] };
  content.forEach((raw: unknown, j) => {
    const blockParam = `${param}[${j}]`;
    const { block, type } = blockOf(raw, blockParam);
    if (type === 'tool_result') results.content.push(toolResultBlock(block, blockParam));
    else rest.content.push(userBlock(block, blockParam));
  });
  const out: Message[] = [];
  if (results.content.length > 0) out.push(results);
  if (rest.content.length > 0 || results.content.length === 0) out.push(rest);
  return out;
}

function assistantTurn(content: unknown, param: string): Message {
  if (typeof content === 'string') return { role: 'assistant', content: content === '' ? [] : [{ type: 'text', text: content }] };
  if (!Array.isArray(content)) throw badRequest('content must be a string or an array of blocks.', param);
  return { role: 'assistant', content: content.map((raw: unknown, j) => assistantBlock(raw, `${param}[${j}]`)) };
}

function messagesToCanonical(messages: unknown): Message[] {
  if (!Array.isArray(messages)) throw badRequest('messages must be an array.', 'messages');
  return messages.flatMap((raw: unknown, i): Message[] => {
    const param = `messages[${i}]`;
    if (!isRecord(raw)) throw badRequest('Each message must be an object.', param);
    if (raw['role'] === 'user') return userTurn(raw['content'], `${param}.content`);
    if (raw['role'] === 'assistant') return [assistantTurn(raw['content'], `${param}.content`)];
    throw badRequest('role must be "user" or "assistant" (the system prompt goes in "system").', `${param}.role`);
  });
}

/** Client tools (no type, or `custom`) → functions; Anthropic's typed tools (bash_…, web_search_…) stay native. */
export function messagesToolsToCanonical(tools: unknown): ToolDefinition[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw badRequest('tools must be an array.', 'tools');
  return tools.map((tool: unknown, i): ToolDefinition => {
    const param = `tools[${i}]`;
    if (!isRecord(tool)) throw badRequest('Each tool must be an object.', param);
    const type = tool['type'];
    if (type !== undefined && type !== null && typeof type !== 'string') throw badRequest('tool type must be a string.', `${param}.type`);
    if (typeof type === 'string' && type !== 'custom') return { kind: 'native', format: 'messages', type, definition: tool };
    const name = tool['name'];
    if (typeof name !== 'string' || name === '') throw badRequest('Each tool needs a name.', `${param}.name`);
    // A client tool with fields the function definition has no place for (defer_loading, allowed_callers...)
    // is kept whole, for an upstream that understands them, rather than sent without them.
    if (Object.keys(tool).some((key) => !FUNCTION_TOOL_FIELDS.has(key))) return { kind: 'native', format: 'messages', type: 'custom', definition: tool };
    const definition: ToolDefinition = { kind: 'function', name };
    const description = readString(tool, 'description', `${param}.description`);
    if (description !== undefined) definition.description = description;
    if (tool['input_schema'] !== undefined && tool['input_schema'] !== null) {
      if (!isRecord(tool['input_schema'])) throw badRequest('input_schema must be a JSON Schema object.', `${param}.input_schema`);
      definition.parameters = tool['input_schema'];
    }
    if (typeof tool['strict'] === 'boolean') definition.strict = tool['strict'];
    if (isRecord(tool['cache_control'])) definition.cacheControl = tool['cache_control'];
    return definition;
  });
}

/** `tool_choice` → the canonical choice, and whether parallel tool use was switched off. */
export function messagesToolChoiceToCanonical(choice: unknown): { toolChoice: ToolChoice; noParallel: boolean } | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (!isRecord(choice)) throw badRequest('tool_choice must be an object with a type.', 'tool_choice');
  let toolChoice: ToolChoice;
  switch (choice['type']) {
    case 'auto':
      toolChoice = { kind: 'auto' };
      break;
    case 'any':
      toolChoice = { kind: 'required' };
      break;
    case 'none':
      toolChoice = { kind: 'none' };
      break;
    case 'tool':
      if (typeof choice['name'] !== 'string' || choice['name'] === '') throw badRequest('tool_choice of type "tool" needs a name.', 'tool_choice.name');
      toolChoice = { kind: 'tool', name: choice['name'] };
      break;
    default:
      throw badRequest('tool_choice.type must be auto, any, tool or none.', 'tool_choice.type');
  }
  return { toolChoice, noParallel: choice['disable_parallel_tool_use'] === true };
}

function readOptions(body: JsonObject, extra: JsonObject): OptionsBuilder {
  const out = new OptionsBuilder();
  readSharedOptions(body, out, ['max_tokens', 'temperature', 'top_p', 'top_k']);
  out.set('stop', readStringList(body, 'stop_sequences'), 'stop_sequences');
  const metadata = body['metadata'];
  if (metadata !== undefined && metadata !== null) {
    if (!isRecord(metadata)) throw badRequest('metadata must be an object.', 'metadata');
    out.set('user', readString(metadata, 'user_id', 'metadata.user_id'), 'metadata.user_id');
    const rest = unknownFields(metadata, new Set(['user_id']));
    if (rest) extra['metadata'] = rest;
  }
  const thinkingValue = body['thinking'];
  if (thinkingValue !== undefined && thinkingValue !== null) {
    const thinking = readThinking(thinkingValue, 'thinking');
    if (thinking) out.set('reasoning', thinking, 'thinking');
    else extra['thinking'] = thinkingValue; // adaptive, between_tools...: only a Messages upstream knows them
  }
  return out;
}

/** A Messages body (already validated as an object by the route) → the canonical request. */
export function messagesRequestToCanonical(body: JsonObject): CanonicalRequest {
  const model = body['model'];
  if (typeof model !== 'string' || model === '') throw badRequest('model is required.', 'model');
  const extra = unknownFields(body, MAPPED_FIELDS) ?? {};
  const built = readOptions(body, extra);
  const messages = messagesToCanonical(body['messages']);
  const system = systemMessage(body['system']);
  if (system) messages.unshift(system);
  const request: ModelRequest = { model, messages, tools: messagesToolsToCanonical(body['tools']), options: built.options };
  const choice = messagesToolChoiceToCanonical(body['tool_choice']);
  if (choice) {
    request.toolChoice = choice.toolChoice;
    if (choice.noParallel) built.set('parallelToolCalls', false, 'tool_choice.disable_parallel_tool_use');
  }
  if (Object.keys(extra).length > 0) request.extra = { format: 'messages', fields: extra };
  return { request, fieldNames: built.fieldNames };
}
