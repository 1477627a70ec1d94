// Canonical messages → the Messages API's `system` and alternating user/assistant turns
// (https://docs.anthropic.com/en/api/messages). Pure: builds new objects, never mutates the request
// (retries resend it). A part Anthropic cannot take is a 400 naming it (`messages[i].content[j]`, by the
// canonical positions), never dropped silently.
import type {
  AssistantPart,
  CacheControl,
  DocumentPart,
  FilePart,
  ImagePart,
  MediaSource,
  Message,
  NativePart,
  ReasoningPart,
  TextPart,
  ToolCallPart,
  ToolResultPart,
  UserPart,
} from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { parseBoundedJson } from '../../http/json-depth';
import type { AnthropicContentBlock, AnthropicMessageParam, AnthropicTextBlock, AnthropicToolResultBlock } from './anthropic-wire-types';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function badRequest(message: string, param: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

function withCache<T extends AnthropicContentBlock>(block: T, cacheControl: CacheControl | undefined): T {
  if (cacheControl !== undefined) block['cache_control'] = cacheControl;
  return block;
}

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;
const HTTP_URL = /^https?:\/\//i;

/** A `data:` URL given as a url source (formats normally split it already) → base64 pieces. */
function splitDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = DATA_URL.exec(url);
  return match?.[1] && match[2] !== undefined ? { mediaType: match[1], data: match[2] } : undefined;
}

function imageBlock(part: ImagePart, param: string): AnthropicContentBlock {
  const source = part.source;
  switch (source.kind) {
    case 'base64':
      return withCache({ type: 'image', source: { type: 'base64', media_type: source.mediaType, data: source.data } }, part.cacheControl);
    case 'url': {
      const inline = splitDataUrl(source.url);
      if (inline) return withCache({ type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.data } }, part.cacheControl);
      if (!HTTP_URL.test(source.url)) throw badRequest('Image URLs must be data: URLs or http(s) URLs.', param);
      return withCache({ type: 'image', source: { type: 'url', url: source.url } }, part.cacheControl);
    }
    case 'file-id':
      throw badRequest('Images given by file id cannot be sent to this provider; send the image inline or as an https URL.', param);
    case 'text':
      throw badRequest('An image part cannot hold text.', param);
  }
}

const isPdf = (mediaType: string | undefined): boolean => mediaType?.toLowerCase() === 'application/pdf';
const isText = (mediaType: string | undefined): boolean => mediaType?.toLowerCase().startsWith('text/') === true;

/**
 * The `source` of a document block: base64 PDF, plain text (text/* content, decoded: Anthropic's text
 * source takes the text itself), or a PDF URL. Anthropic documents are PDFs or plain text only.
 */
function documentSource(source: MediaSource, param: string): Record<string, unknown> {
  switch (source.kind) {
    case 'base64':
      if (isPdf(source.mediaType)) return { type: 'base64', media_type: 'application/pdf', data: source.data };
      if (isText(source.mediaType)) return { type: 'text', media_type: 'text/plain', data: Buffer.from(source.data, 'base64').toString('utf8') };
      throw badRequest(`Files of type ${source.mediaType} cannot be sent to this provider; it reads PDF and plain-text files.`, param);
    case 'text':
      return { type: 'text', media_type: 'text/plain', data: source.data };
    case 'url': {
      const inline = splitDataUrl(source.url);
      if (inline) return documentSource({ kind: 'base64', ...inline }, param);
      if (!HTTP_URL.test(source.url)) throw badRequest('File URLs must be data: URLs or http(s) URLs.', param);
      if (source.mediaType !== undefined && !isPdf(source.mediaType)) {
        throw badRequest(`Files of type ${source.mediaType} can only be sent to this provider inline; URL documents must be PDFs.`, param);
      }
      return { type: 'url', url: source.url };
    }
    case 'file-id':
      throw badRequest('Files given by file id cannot be sent to this provider; send the file inline (base64) or as an https URL.', param);
  }
}

function fileBlock(part: FilePart, param: string): AnthropicContentBlock {
  const source = part.source;
  const mediaType = source.kind === 'file-id' ? undefined : source.mediaType;
  // An image sent as a file is still an image to Claude.
  if (mediaType?.toLowerCase().startsWith('image/') === true)
    return imageBlock({ type: 'image', source, ...(part.cacheControl ? { cacheControl: part.cacheControl } : {}) }, param);
  const block: AnthropicContentBlock = { type: 'document', source: documentSource(source, param) };
  if (part.filename !== undefined && part.filename !== '') block['title'] = part.filename;
  return withCache(block, part.cacheControl);
}

function documentBlock(part: DocumentPart, param: string): AnthropicContentBlock {
  const block: AnthropicContentBlock = { type: 'document', source: documentSource(part.source, param) };
  if (part.title !== undefined) block['title'] = part.title;
  if (part.context !== undefined) block['context'] = part.context;
  if (part.citations !== undefined) block['citations'] = part.citations;
  return withCache(block, part.cacheControl);
}

function textBlock(part: TextPart): AnthropicTextBlock {
  return withCache({ type: 'text', text: part.text }, part.cacheControl);
}

/** A native part of the Messages format is an Anthropic block already; another format's is refused. */
function nativeBlock(part: NativePart, param: string): AnthropicContentBlock {
  if (part.format !== 'messages' || typeof part.value['type'] !== 'string') {
    const kind = typeof part.value['type'] === 'string' ? ` "${part.value['type']}"` : '';
    throw badRequest(`A ${part.format} content part${kind} has no equivalent for this provider.`, param);
  }
  return part.value as AnthropicContentBlock;
}

/** Anthropic refuses empty text blocks ("text content blocks must be non-empty"); they carry nothing. */
const isEmptyText = (part: TextPart): boolean => part.text === '' && part.cacheControl === undefined;

/** Tool-call arguments are JSON text; Anthropic wants the input object itself. */
function parseArguments(call: ToolCallPart, param: string): Record<string, unknown> {
  if (call.arguments.trim() === '') return {};
  try {
    const parsed: unknown = parseBoundedJson(call.arguments);
    if (isRecord(parsed)) return parsed;
  } catch {
    // refused below
  }
  throw badRequest('Tool call arguments must be a JSON object encoded as a string.', param);
}

/**
 * Reasoning goes back as Anthropic wrote it: `thinking` with its signature, or `redacted_thinking`.
 * Reasoning without either came from another provider (an OpenAI summary, encrypted content): Anthropic
 * rejects a thinking block it cannot verify, and the text is not the model's own to continue from, so it
 * is left out of the turn.
 */
function reasoningBlock(part: ReasoningPart): AnthropicContentBlock | undefined {
  if (part.redactedData !== undefined) return { type: 'redacted_thinking', data: part.redactedData };
  if (part.signature !== undefined) return { type: 'thinking', thinking: part.text, signature: part.signature };
  return undefined;
}

/**
 * The blocks of a turn's parts (user, assistant or tool-result content: the callers' types say which
 * parts each may hold), in order. Parts that carry nothing (empty text, reasoning from another provider)
 * are left out; positions in `param` stay the canonical ones.
 */
function contentBlocks(content: readonly (UserPart | AssistantPart)[], param: string): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  content.forEach((part, j) => {
    const at = `${param}[${j}]`;
    switch (part.type) {
      case 'text':
        if (!isEmptyText(part)) blocks.push(textBlock(part));
        break;
      case 'image':
        blocks.push(imageBlock(part, at));
        break;
      case 'file':
        blocks.push(fileBlock(part, at));
        break;
      case 'document':
        blocks.push(documentBlock(part, at));
        break;
      case 'native':
        blocks.push(nativeBlock(part, at));
        break;
      case 'reasoning': {
        const block = reasoningBlock(part);
        if (block) blocks.push(block);
        break;
      }
      case 'tool-call':
        blocks.push({ type: 'tool_use', id: part.id, name: part.name, input: parseArguments(part, `${at}.arguments`) });
        break;
    }
  });
  return blocks;
}

function toolResultBlocks(content: readonly ToolResultPart[], param: string): AnthropicToolResultBlock[] {
  return content.map((part, j) => {
    const at = `${param}[${j}]`;
    if (part.callId === '') throw badRequest('Tool results need the id of the call they answer.', `${at}.callId`);
    const block: AnthropicToolResultBlock = {
      type: 'tool_result',
      tool_use_id: part.callId,
      content: typeof part.output === 'string' ? part.output : contentBlocks(part.output, `${at}.output`),
    };
    if (part.isError === true) block.is_error = true;
    return withCache(block, part.cacheControl);
  });
}

const isThinking = (block: AnthropicContentBlock): boolean => block.type === 'thinking' || block.type === 'redacted_thinking';

/**
 * Anthropic wants an assistant turn's thinking first. A turn that already starts with thinking keeps its
 * order (interleaved thinking between server tool blocks is legitimate); otherwise the thinking blocks
 * move to the front, in their order.
 */
function thinkingFirst(blocks: AnthropicContentBlock[]): AnthropicContentBlock[] {
  const first = blocks[0];
  if (!first || isThinking(first) || !blocks.some(isThinking)) return blocks;
  return [...blocks.filter(isThinking), ...blocks.filter((b) => !isThinking(b))];
}

export interface AnthropicConversation {
  /** System and developer text, in order (empty when there is none). */
  system: AnthropicTextBlock[];
  turns: AnthropicMessageParam[];
}

/**
 * Messages → `system` + alternating turns. System and developer messages become `system` wherever they
 * stand. Consecutive same-role turns (tool results followed by a user message, several tool messages)
 * merge into one, tool results first, as Anthropic requires.
 */
export function canonicalToAnthropicMessages(messages: readonly Message[]): AnthropicConversation {
  const system: AnthropicTextBlock[] = [];
  const turns: { role: 'user' | 'assistant'; content: AnthropicContentBlock[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: AnthropicContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) {
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
    const param = `messages[${i}].content`;
    switch (message.role) {
      case 'system':
        for (const part of message.content) if (!isEmptyText(part)) system.push(textBlock(part));
        break;
      case 'user':
        push('user', contentBlocks(message.content, param));
        break;
      case 'assistant':
        push('assistant', contentBlocks(message.content, param));
        break;
      case 'tool':
        push('user', toolResultBlocks(message.content, param));
        break;
    }
  });
  // A turn of one plain text block is sent as a string: the smallest, most common shape.
  const compact = turns.map((turn): AnthropicMessageParam => {
    const content = turn.role === 'assistant' ? thinkingFirst(turn.content) : turn.content;
    const only = content.length === 1 ? content[0] : undefined;
    if (only && only.type === 'text' && Object.keys(only).length === 2) return { role: turn.role, content: (only as AnthropicTextBlock).text };
    return { role: turn.role, content };
  });
  return { system, turns: compact };
}
