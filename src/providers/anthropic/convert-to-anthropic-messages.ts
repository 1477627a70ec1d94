// Canonical request (an OpenAI chat-completions body) → Anthropic Messages body. Pure: builds new
// objects and never mutates the caller's request (retries resend the same canonical body).
// `model`, `anthropic_version` and `stream` are left to the hosting (Anthropic puts the model in the
// body, Bedrock and Vertex in the URL).
import { GatewayError } from '../../http/errors';
import type { ChatCompletionRequest, ChatMessage, JsonObject } from '../types';
import { planJsonMode, type JsonToolPlan } from './anthropic-json-mode';
import type {
  AnthropicContentBlock,
  AnthropicImageBlock,
  AnthropicMessageParam,
  AnthropicMessagesBody,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicToolChoice,
  AnthropicToolResultBlock,
} from './anthropic-wire-types';
import { convertToAnthropicTools } from './convert-to-anthropic-tools';

/** Anthropic requires max_tokens; the OpenAI format does not. */
export const DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicRequestPlan {
  body: AnthropicMessagesBody;
  /** Set when response_format is enforced through a JSON tool (see anthropic-json-mode.ts). */
  jsonTool: JsonToolPlan | null;
}

/** Canonical fields this converter maps; everything else is not sent (Anthropic rejects unknown fields). */
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function badRequest(message: string, param: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

/** `data:<media>;base64,<data>` → base64 source; http(s) URLs → url source. */
export function imageUrlToBlock(url: string, param: string): AnthropicImageBlock {
  if (url.startsWith('data:')) {
    const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
    if (!match?.[1] || match[2] === undefined) throw badRequest('Image data URLs must be base64 encoded (data:<media type>;base64,<data>).', param);
    return { type: 'image', source: { type: 'base64', media_type: match[1], data: match[2] } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw badRequest('Image URLs must be data: URLs or http(s) URLs.', param);
}

function fileToBlock(part: JsonObject, param: string): AnthropicContentBlock {
  const file = isRecord(part['file']) ? part['file'] : {};
  const data = file['file_data'];
  if (typeof data === 'string') {
    const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(data);
    if (match?.[1] && match[2] !== undefined) {
      return { type: 'document', source: { type: 'base64', media_type: match[1], data: match[2] } };
    }
  }
  throw badRequest('Only inline file parts (file.file_data as a base64 data: URL) can be sent to this provider.', param);
}

/** One content part of the OpenAI format → an Anthropic block. Anthropic-native blocks pass as they are. */
function partToBlock(part: JsonObject, param: string): AnthropicContentBlock {
  switch (part['type']) {
    case 'text': {
      const block: AnthropicTextBlock = { type: 'text', text: typeof part['text'] === 'string' ? part['text'] : '' };
      if (part['cache_control'] !== undefined) block['cache_control'] = part['cache_control'];
      return block;
    }
    case 'image_url': {
      const image = part['image_url'];
      const url = typeof image === 'string' ? image : isRecord(image) && typeof image['url'] === 'string' ? image['url'] : undefined;
      if (url === undefined) throw badRequest('image_url parts need image_url.url.', param);
      return imageUrlToBlock(url, param);
    }
    case 'file':
      return fileToBlock(part, param);
    case 'input_audio':
      throw badRequest('Audio input is not supported by this provider.', param);
    default:
      // Anthropic-native blocks (image with source, document, thinking, tool_use...) carried through the
      // canonical model by the /v1/messages format, or new block types: forwarded verbatim.
      if (typeof part['type'] !== 'string') throw badRequest('Content parts need a type.', param);
      return part as AnthropicContentBlock;
  }
}

function contentToBlocks(content: ChatMessage['content'], param: string): AnthropicContentBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.map((part, i) => partToBlock(part, `${param}[${i}]`));
}

function systemText(content: ChatMessage['content'], param: string): AnthropicTextBlock[] {
  return contentToBlocks(content, param).map((block) => {
    if (block.type !== 'text') throw badRequest('System and developer messages may only contain text.', param);
    return block as AnthropicTextBlock;
  });
}

function parseArguments(args: string, param: string): unknown {
  if (args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    if (isRecord(parsed)) return parsed;
  } catch {
    // fall through to the error below
  }
  throw badRequest('Tool call arguments must be a JSON object encoded as a string.', param);
}

function assistantBlocks(message: ChatMessage, param: string): AnthropicContentBlock[] {
  // Thinking blocks (the `thinking_blocks` extension the /v1/messages format fills) must come back
  // first and unchanged when a thinking model continues after a tool call.
  const thinking = Array.isArray(message['thinking_blocks'])
    ? (message['thinking_blocks'] as unknown[]).filter((b): b is AnthropicContentBlock => isRecord(b) && typeof b['type'] === 'string')
    : [];
  const blocks = [...thinking, ...contentToBlocks(message.content, `${param}.content`)];
  (message.tool_calls ?? []).forEach((call, j) => {
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseArguments(call.function.arguments, `${param}.tool_calls[${j}].function.arguments`),
    });
  });
  return blocks;
}

function toolResultBlock(message: ChatMessage, param: string): AnthropicToolResultBlock {
  if (typeof message.tool_call_id !== 'string' || message.tool_call_id === '') {
    throw badRequest('Messages with role "tool" need tool_call_id.', `${param}.tool_call_id`);
  }
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: message.tool_call_id };
  if (typeof message.content === 'string') block.content = message.content;
  else if (Array.isArray(message.content)) block.content = contentToBlocks(message.content, `${param}.content`);
  if (message['is_error'] === true) block.is_error = true;
  return block;
}

/** Messages → `system` + alternating turns. Consecutive same-role turns (tool results followed by a
 *  user message, several tool results) become one turn, tool results first, as Anthropic requires. */
export function convertMessages(messages: readonly ChatMessage[]): { system: AnthropicTextBlock[]; turns: AnthropicMessageParam[] } {
  const system: AnthropicTextBlock[] = [];
  const turns: { role: 'user' | 'assistant'; content: AnthropicContentBlock[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: AnthropicContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) {
      // Anthropic wants tool_result blocks at the start of a user turn.
      const results = blocks.filter((b) => b.type === 'tool_result');
      const rest = blocks.filter((b) => b.type !== 'tool_result');
      const lastResults = last.content.filter((b) => b.type === 'tool_result');
      const lastRest = last.content.filter((b) => b.type !== 'tool_result');
      last.content = [...lastResults, ...results, ...lastRest, ...rest];
    } else {
      turns.push({ role, content: blocks });
    }
  };
  messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...systemText(message.content, `${param}.content`));
        break;
      case 'user':
        push('user', contentToBlocks(message.content, `${param}.content`));
        break;
      case 'assistant':
        push('assistant', assistantBlocks(message, param));
        break;
      case 'tool':
        push('user', [toolResultBlock(message, param)]);
        break;
      default:
        throw badRequest(`Unknown message role "${String(message.role)}".`, `${param}.role`);
    }
  });
  // A turn of a single plain text block is sent as a string: the smallest, most common shape.
  const compact = turns.map((turn): AnthropicMessageParam => {
    const only = turn.content.length === 1 ? turn.content[0] : undefined;
    if (only && only.type === 'text' && Object.keys(only).length === 2) return { role: turn.role, content: (only as AnthropicTextBlock).text };
    return turn;
  });
  return { system, turns: compact };
}

function convertToolChoice(choice: unknown): AnthropicToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required' || choice === 'any') return { type: 'any' };
  if (isRecord(choice)) {
    const fn = choice['function'];
    if (choice['type'] === 'function' && isRecord(fn) && typeof fn['name'] === 'string') return { type: 'tool', name: fn['name'] };
    // Anthropic-native choices ({type: auto|any|tool|none}) from the /v1/messages format.
    if (choice['type'] === 'tool' && typeof choice['name'] === 'string') return { ...choice, type: 'tool', name: choice['name'] };
    if (choice['type'] === 'auto' || choice['type'] === 'any' || choice['type'] === 'none') return { ...choice, type: choice['type'] };
  }
  throw badRequest('tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name": ...}}.', 'tool_choice');
}

const optionalNumber = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** The canonical request → an Anthropic Messages body and the plan the reply translators need. */
export function convertToAnthropicMessages(request: ChatCompletionRequest): AnthropicRequestPlan {
  if (!Array.isArray(request.messages)) throw badRequest('messages must be an array.', 'messages');
  const { system, turns } = convertMessages(request.messages);
  const maxTokens = optionalNumber(request['max_completion_tokens']) ?? optionalNumber(request['max_tokens']) ?? DEFAULT_MAX_TOKENS;
  const body: AnthropicMessagesBody = { messages: turns, max_tokens: maxTokens };

  if (system.length > 0) {
    const plain = system.every((b) => Object.keys(b).length === 2);
    body.system = plain ? system.map((b) => b.text).join('\n\n') : system;
  }
  const stop = request['stop'];
  if (typeof stop === 'string') body.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) body.stop_sequences = stop.filter((s): s is string => typeof s === 'string');
  const temperature = optionalNumber(request['temperature']);
  if (temperature !== undefined) body.temperature = temperature;
  const topP = optionalNumber(request['top_p']);
  if (topP !== undefined) body.top_p = topP;
  const topK = optionalNumber(request['top_k']);
  if (topK !== undefined) body.top_k = topK;
  if (typeof request['user'] === 'string' && request['user'] !== '') body.metadata = { user_id: request['user'] };
  if (isRecord(request['thinking'])) body.thinking = request['thinking'];

  const tools: AnthropicTool[] = convertToAnthropicTools(request['tools']);
  let toolChoice = convertToolChoice(request['tool_choice']);
  const json = planJsonMode(request, tools);
  if (json) {
    tools.push(json.tool);
    if (json.toolChoice) toolChoice = json.toolChoice;
  }
  if (tools.length > 0) {
    body.tools = tools;
    if (request['parallel_tool_calls'] === false && toolChoice?.type !== 'none') {
      toolChoice = { ...(toolChoice ?? { type: 'auto' }), disable_parallel_tool_use: true };
    }
  }
  if (toolChoice) body.tool_choice = toolChoice;
  return { body, jsonTool: json?.plan ?? null };
}
