// Chat completions `messages` → canonical messages. Every part the canonical model describes is mapped;
// parts it does not (input_audio, new part types) become native 'chat' parts, which an OpenAI-format
// upstream receives verbatim and any other provider refuses by name rather than dropping.
import type {
  AssistantPart,
  CacheControl,
  FilePart,
  ImagePart,
  JsonObject,
  MediaSource,
  Message,
  ReasoningPart,
  TextPart,
  ToolCallPart,
  ToolResultPart,
  UserPart,
} from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { parseBase64DataUrl, urlToMediaSource } from '../shared/data-url';
import { badRequest, isRecord, readString } from '../shared/read-fields';

/** String content is one text part; an empty string is no part (upstreams such as Anthropic refuse empty text). */
function stringContent(text: string): TextPart[] {
  return text === '' ? [] : [{ type: 'text', text }];
}

function withCacheControl<T extends { cacheControl?: CacheControl }>(target: T, part: JsonObject): T {
  // `cache_control` on chat parts and tools: the extension Anthropic-backed OpenAI-format gateways accept.
  if (isRecord(part['cache_control'])) target.cacheControl = part['cache_control'];
  return target;
}

function textPart(part: JsonObject, param: string): TextPart {
  const text = part['text'];
  if (typeof text !== 'string') throw badRequest(`${param}.text must be a string.`, `${param}.text`);
  return withCacheControl<TextPart>({ type: 'text', text }, part);
}

function imagePart(part: JsonObject, param: string): ImagePart {
  const image = part['image_url'];
  const url = typeof image === 'string' ? image : isRecord(image) && typeof image['url'] === 'string' ? image['url'] : undefined;
  if (url === undefined) throw badRequest(`${param}.image_url.url must be a string.`, `${param}.image_url.url`);
  const source = urlToMediaSource(url);
  if (!source) throw badRequest('Image data URLs must be base64 encoded (data:<media type>;base64,<data>).', `${param}.image_url.url`);
  const converted: ImagePart = { type: 'image', source };
  if (isRecord(image) && typeof image['detail'] === 'string') converted.detail = image['detail'];
  return withCacheControl(converted, part);
}

/** The media type of raw base64 file data, from the file name (OpenAI accepts PDFs this way). */
function mediaTypeOfName(filename: string | undefined): string {
  return filename?.toLowerCase().endsWith('.pdf') ? 'application/pdf' : 'application/octet-stream';
}

function filePart(part: JsonObject, param: string): FilePart {
  const file = part['file'];
  if (!isRecord(file)) throw badRequest(`${param}.file must be an object.`, `${param}.file`);
  const filename = readString(file, 'filename', `${param}.file.filename`);
  const fileData = readString(file, 'file_data', `${param}.file.file_data`);
  const fileId = readString(file, 'file_id', `${param}.file.file_id`);
  let source: MediaSource;
  if (fileData !== undefined) {
    const parsed = fileData.startsWith('data:') ? parseBase64DataUrl(fileData) : { mediaType: mediaTypeOfName(filename), data: fileData };
    if (!parsed) throw badRequest('file_data must be base64 (a data:<media type>;base64,<data> URL or bare base64).', `${param}.file.file_data`);
    source = { kind: 'base64', mediaType: parsed.mediaType, data: parsed.data };
  } else if (fileId !== undefined) {
    source = { kind: 'file-id', fileId };
  } else {
    throw badRequest('File parts need file.file_data or file.file_id.', `${param}.file`);
  }
  const converted: FilePart = { type: 'file', source };
  if (filename !== undefined) converted.filename = filename;
  return withCacheControl(converted, part);
}

function partType(part: unknown, param: string): { part: JsonObject; type: string } {
  if (!isRecord(part) || typeof part['type'] !== 'string') throw badRequest('Content parts must be objects with a type.', `${param}.type`);
  return { part, type: part['type'] };
}

function userPart(raw: unknown, param: string): UserPart {
  const { part, type } = partType(raw, param);
  switch (type) {
    case 'text':
      return textPart(part, param);
    case 'image_url':
      return imagePart(part, param);
    case 'file':
      return filePart(part, param);
    default:
      // input_audio and part types added later: only an OpenAI-format upstream can take them.
      return { type: 'native', format: 'chat', value: part };
  }
}

function partsOf<T>(content: unknown, param: string, convert: (part: unknown, param: string) => T, text: (s: string) => T[]): T[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return text(content);
  if (!Array.isArray(content)) throw badRequest('content must be a string or an array of content parts.', param);
  return content.map((part, j) => convert(part, `${param}[${j}]`));
}

function systemMessage(raw: JsonObject, param: string, developer: boolean): Message {
  const content = partsOf(
    raw['content'],
    `${param}.content`,
    (part, partParam) => {
      const { part: record, type } = partType(part, partParam);
      if (type !== 'text') throw badRequest('System and developer messages may only contain text parts.', `${partParam}.type`);
      return textPart(record, partParam);
    },
    stringContent,
  );
  return developer ? { role: 'system', content, developer: true } : { role: 'system', content };
}

function userMessage(raw: JsonObject, param: string): Message {
  const message: Message = { role: 'user', content: partsOf<UserPart>(raw['content'], `${param}.content`, userPart, stringContent) };
  const name = readString(raw, 'name', `${param}.name`);
  if (name !== undefined) message.name = name;
  return message;
}

/** `thinking_blocks` (LiteLLM's extension carrying Anthropic thinking with its signature) → reasoning parts. */
function thinkingBlocks(blocks: unknown, param: string): ReasoningPart[] {
  if (!Array.isArray(blocks)) throw badRequest(`${param} must be an array.`, param);
  return blocks.map((block, j) => {
    const { part, type } = partType(block, `${param}[${j}]`);
    if (type === 'thinking') {
      const reasoning: ReasoningPart = { type: 'reasoning', text: typeof part['thinking'] === 'string' ? part['thinking'] : '' };
      if (typeof part['signature'] === 'string') reasoning.signature = part['signature'];
      return reasoning;
    }
    if (type === 'redacted_thinking' && typeof part['data'] === 'string') return { type: 'reasoning', text: '', redactedData: part['data'] };
    throw badRequest('thinking_blocks entries must be thinking or redacted_thinking blocks.', `${param}[${j}]`);
  });
}

/** Google's `extra_content.google.thought_signature` on a tool call (see chat-wire-types.ts), if any. */
function thoughtSignature(call: JsonObject): string | undefined {
  const extra = call['extra_content'];
  const google = isRecord(extra) ? extra['google'] : undefined;
  const signature = isRecord(google) ? google['thought_signature'] : undefined;
  return typeof signature === 'string' && signature !== '' ? signature : undefined;
}

/** A tool call, preceded by the signature-only reasoning part its thought signature travels as. */
function toolCallParts(raw: unknown, param: string): AssistantPart[] {
  const call = toolCallPart(raw, param);
  const signature = isRecord(raw) && call.type === 'tool-call' ? thoughtSignature(raw) : undefined;
  return signature === undefined ? [call] : [{ type: 'reasoning', text: '', signature }, call];
}

function toolCallPart(raw: unknown, param: string): AssistantPart {
  if (!isRecord(raw)) throw badRequest('Tool calls must be objects.', param);
  if (raw['type'] !== undefined && raw['type'] !== 'function') return { type: 'native', format: 'chat', value: raw }; // custom tool calls
  const id = raw['id'];
  if (typeof id !== 'string' || id === '') throw badRequest('Tool calls need an id.', `${param}.id`);
  const fn = raw['function'];
  if (!isRecord(fn) || typeof fn['name'] !== 'string') throw badRequest('Tool calls need function.name.', `${param}.function.name`);
  const args = fn['arguments'];
  let text: string;
  if (typeof args === 'string') text = args;
  else if (isRecord(args))
    text = JSON.stringify(args); // some clients send the object itself
  else if (args === undefined || args === null) text = '';
  else throw badRequest('function.arguments must be a JSON string.', `${param}.function.arguments`);
  const call: ToolCallPart = { type: 'tool-call', id, name: fn['name'], arguments: text };
  return call;
}

function assistantContentPart(raw: unknown, param: string): AssistantPart {
  const { part, type } = partType(raw, param);
  if (type === 'text') return textPart(part, param);
  // A refusal is what the model said: kept as text, which every provider can replay.
  if (type === 'refusal' && typeof part['refusal'] === 'string') return { type: 'text', text: part['refusal'] };
  return { type: 'native', format: 'chat', value: part };
}

function assistantMessage(raw: JsonObject, param: string): Message {
  if (raw['function_call'] !== undefined && raw['function_call'] !== null) {
    throw new GatewayError('unsupported_parameter', 'The deprecated function_call cannot be translated for this model; send tool_calls.', {
      param: `${param}.function_call`,
    });
  }
  const content: AssistantPart[] = [];
  // Reasoning first: a thinking model continuing after a tool call needs it ahead of the rest.
  if (raw['thinking_blocks'] !== undefined && raw['thinking_blocks'] !== null) {
    content.push(...thinkingBlocks(raw['thinking_blocks'], `${param}.thinking_blocks`));
  } else {
    const reasoning = readString(raw, 'reasoning_content', `${param}.reasoning_content`);
    if (reasoning) content.push({ type: 'reasoning', text: reasoning });
  }
  content.push(...partsOf<AssistantPart>(raw['content'], `${param}.content`, assistantContentPart, stringContent));
  const refusal = readString(raw, 'refusal', `${param}.refusal`);
  if (refusal) content.push({ type: 'text', text: refusal });
  const toolCalls = raw['tool_calls'];
  if (toolCalls !== undefined && toolCalls !== null) {
    if (!Array.isArray(toolCalls)) throw badRequest('tool_calls must be an array.', `${param}.tool_calls`);
    toolCalls.forEach((call, j) => content.push(...toolCallParts(call, `${param}.tool_calls[${j}]`)));
  }
  const message: Message = { role: 'assistant', content };
  const name = readString(raw, 'name', `${param}.name`);
  if (name !== undefined) message.name = name;
  return message;
}

type ToolOutputPart = Exclude<ToolResultPart['output'], string>[number];

function toolOutputPart(raw: unknown, param: string): ToolOutputPart {
  const { part, type } = partType(raw, param);
  if (type === 'text') return textPart(part, param);
  if (type === 'image_url') return imagePart(part, param);
  if (type === 'file') return filePart(part, param);
  throw badRequest(`Tool message content parts of type "${type}" cannot be translated for this model.`, `${param}.type`);
}

function toolMessage(raw: JsonObject, param: string): Message {
  const callId = raw['tool_call_id'];
  if (typeof callId !== 'string' || callId === '') throw badRequest('Messages with role "tool" need tool_call_id.', `${param}.tool_call_id`);
  const content = raw['content'];
  const output: ToolResultPart['output'] =
    content === undefined || content === null || typeof content === 'string'
      ? (content ?? '')
      : partsOf<ToolOutputPart>(content, `${param}.content`, toolOutputPart, (text) => [{ type: 'text', text }]);
  return { role: 'tool', content: [{ type: 'tool-result', callId, output }] };
}

/** `messages` of a chat completions body → canonical messages (one canonical message per chat message). */
export function chatMessagesToCanonical(messages: unknown): Message[] {
  if (!Array.isArray(messages)) throw badRequest('messages must be an array.', 'messages');
  return messages.map((raw: unknown, i) => {
    const param = `messages[${i}]`;
    if (!isRecord(raw)) throw badRequest('Each message must be an object.', param);
    switch (raw['role']) {
      case 'system':
        return systemMessage(raw, param, false);
      case 'developer':
        return systemMessage(raw, param, true);
      case 'user':
        return userMessage(raw, param);
      case 'assistant':
        return assistantMessage(raw, param);
      case 'tool':
        return toolMessage(raw, param);
      default:
        throw badRequest('role must be system, developer, user, assistant or tool.', `${param}.role`);
    }
  });
}
