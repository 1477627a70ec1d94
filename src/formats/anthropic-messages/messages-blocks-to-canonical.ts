// Anthropic Messages content blocks → canonical parts. Blocks the canonical model describes are mapped
// (text, image, document, tool_use, tool_result, thinking, redacted_thinking); every other block
// (server_tool_use, web_search_tool_result, search_result, container_upload, documents with a
// `content` source...) becomes a native 'messages' part, which an upstream speaking Messages receives
// verbatim and any other provider refuses by name rather than dropping.
import type { AssistantPart, DocumentPart, ImagePart, JsonObject, MediaSource, TextPart, ToolResultPart, UserPart } from '../../canonical/model';
import { badRequest, isRecord } from '../shared/read-fields';

export interface Block {
  block: JsonObject;
  type: string;
}

export function blockOf(raw: unknown, param: string): Block {
  if (!isRecord(raw) || typeof raw['type'] !== 'string') throw badRequest('Content blocks must be objects with a type.', `${param}.type`);
  return { block: raw, type: raw['type'] };
}

function withCacheControl<T extends { cacheControl?: JsonObject }>(target: T, block: JsonObject): T {
  if (isRecord(block['cache_control'])) target.cacheControl = block['cache_control'];
  return target;
}

export function textBlock(block: JsonObject, param: string): TextPart {
  const text = block['text'];
  if (typeof text !== 'string') throw badRequest(`${param}.text must be a string.`, `${param}.text`);
  return withCacheControl<TextPart>({ type: 'text', text }, block);
}

/**
 * An image or document `source` → a media source; null for a source kind the canonical model does not
 * describe (a document's `content` source), which keeps the whole block native.
 */
function mediaSource(source: unknown, param: string, document: boolean): MediaSource | null {
  if (!isRecord(source)) throw badRequest(`${param} must be an object.`, param);
  const str = (key: string): string => {
    const value = source[key];
    if (typeof value !== 'string') throw badRequest(`${param}.${key} must be a string.`, `${param}.${key}`);
    return value;
  };
  switch (source['type']) {
    case 'base64':
      return { kind: 'base64', mediaType: str('media_type'), data: str('data') };
    case 'url':
      return { kind: 'url', url: str('url') };
    case 'file':
      return { kind: 'file-id', fileId: str('file_id') };
    case 'text':
      if (document) return { kind: 'text', mediaType: typeof source['media_type'] === 'string' ? source['media_type'] : 'text/plain', data: str('data') };
      break;
    default:
      break;
  }
  return null;
}

function imageBlock(block: JsonObject, param: string): ImagePart | null {
  const source = mediaSource(block['source'], `${param}.source`, false);
  return source ? withCacheControl<ImagePart>({ type: 'image', source }, block) : null;
}

function documentBlock(block: JsonObject, param: string): DocumentPart | null {
  const source = mediaSource(block['source'], `${param}.source`, true);
  if (!source) return null;
  const document: DocumentPart = { type: 'document', source };
  if (typeof block['title'] === 'string') document.title = block['title'];
  if (typeof block['context'] === 'string') document.context = block['context'];
  if (isRecord(block['citations'])) document.citations = block['citations'];
  return withCacheControl(document, block);
}

/** A block of a user turn other than tool_result. */
export function userBlock(raw: unknown, param: string): UserPart {
  const { block, type } = blockOf(raw, param);
  const mapped =
    type === 'text' ? textBlock(block, param) : type === 'image' ? imageBlock(block, param) : type === 'document' ? documentBlock(block, param) : null;
  return mapped ?? { type: 'native', format: 'messages', value: block };
}

type ToolOutputPart = Exclude<ToolResultPart['output'], string>[number];

/** A tool_result block → a tool result. Its content may hold text, images and documents. */
export function toolResultBlock(block: JsonObject, param: string): ToolResultPart {
  const callId = block['tool_use_id'];
  if (typeof callId !== 'string' || callId === '') throw badRequest('tool_result blocks need tool_use_id.', `${param}.tool_use_id`);
  const content = block['content'];
  let output: ToolResultPart['output'];
  if (content === undefined || content === null) output = '';
  else if (typeof content === 'string') output = content;
  else if (Array.isArray(content)) {
    output = content.map((inner: unknown, j): ToolOutputPart => {
      const part = userBlock(inner, `${param}.content[${j}]`);
      if (part.type === 'native') {
        // The canonical tool result holds text, images, files and documents only.
        throw badRequest(`A ${String(part.value['type'])} block inside a tool_result cannot be translated for this model.`, `${param}.content[${j}].type`);
      }
      return part;
    });
  } else throw badRequest('tool_result content must be a string or an array of blocks.', `${param}.content`);
  const result: ToolResultPart = { type: 'tool-result', callId, output };
  if (block['is_error'] === true) result.isError = true;
  return withCacheControl(result, block);
}

/** A block of an assistant turn. */
export function assistantBlock(raw: unknown, param: string): AssistantPart {
  const { block, type } = blockOf(raw, param);
  switch (type) {
    case 'text':
      return textBlock(block, param);
    case 'thinking': {
      const thinking = block['thinking'];
      if (typeof thinking !== 'string') throw badRequest(`${param}.thinking must be a string.`, `${param}.thinking`);
      return typeof block['signature'] === 'string'
        ? { type: 'reasoning', text: thinking, signature: block['signature'] }
        : { type: 'reasoning', text: thinking };
    }
    case 'redacted_thinking': {
      const data = block['data'];
      if (typeof data !== 'string') throw badRequest(`${param}.data must be a string.`, `${param}.data`);
      return { type: 'reasoning', text: '', redactedData: data };
    }
    case 'tool_use': {
      const id = block['id'];
      const name = block['name'];
      if (typeof id !== 'string' || id === '') throw badRequest('tool_use blocks need an id.', `${param}.id`);
      if (typeof name !== 'string' || name === '') throw badRequest('tool_use blocks need a name.', `${param}.name`);
      return { type: 'tool-call', id, name, arguments: JSON.stringify(block['input'] ?? {}) };
    }
    default:
      return { type: 'native', format: 'messages', value: block };
  }
}
