// Chat-completions messages to Gemini `contents` + `systemInstruction`.
// - system and developer messages (wherever they appear) become systemInstruction parts, in order;
// - user content blocks: text, image_url (data: URL -> inlineData, other URL -> fileData),
//   input_audio -> inlineData, file (file_data -> inlineData, file_id -> fileData);
// - assistant text and tool_calls -> a `model` turn with text and functionCall parts;
// - tool messages -> functionResponse parts named after the function of the earlier call whose id
//   they answer (Gemini matches responses by name, the chat format by id);
// - consecutive turns of one role are merged, so parallel tool results form one turn as Gemini expects.
import { GatewayError } from '../../http/errors';
import type { ChatMessage, JsonObject } from '../types';
import type { GeminiContent, GeminiPart } from './gemini-wire-types';

/**
 * Gemini 3 rejects a replayed function call without the thought signature it came with. Replies carry
 * it to the client as `tool_calls[].extra_content.google.thought_signature` (Google's own OpenAI
 * compatibility convention); when a client drops it, this documented placeholder keeps the request
 * valid (https://ai.google.dev/gemini-api/docs/thought-signatures).
 */
export const PLACEHOLDER_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

export interface GeminiConversation {
  systemInstruction?: { parts: GeminiPart[] };
  contents: GeminiContent[];
}

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

function mimeFromName(name: string | undefined, fallback: string): string {
  const extension = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(name ?? '')?.[1]?.toLowerCase();
  return (extension && MIME_BY_EXTENSION[extension]) || fallback;
}

/** `data:<mime>[;base64],<payload>` to an inlineData blob (non-base64 payloads are re-encoded). */
function parseDataUrl(url: string): { mimeType: string; data: string } | null {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!match) return null;
  const mimeType = match[1] || 'application/octet-stream';
  const isBase64 = /;base64/i.test(match[2] ?? '');
  const payload = match[3] ?? '';
  return { mimeType, data: isBase64 ? payload : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64') };
}

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

function mediaPart(url: string, fallbackMime: string, param: string): GeminiPart {
  if (url.startsWith('data:')) {
    const blob = parseDataUrl(url);
    if (!blob) throw new GatewayError('bad_request', 'The data: URL is malformed.', { param });
    return { inlineData: blob };
  }
  if (!/^(https?|gs):\/\//i.test(url) && !url.startsWith('files/')) {
    throw new GatewayError('bad_request', 'Media URLs must be data:, https:, gs: or Gemini files/ references.', { param });
  }
  return { fileData: { mimeType: mimeFromName(url, fallbackMime), fileUri: url } };
}

function contentBlockToPart(block: JsonObject, param: string): GeminiPart | null {
  switch (block['type']) {
    case 'text':
    case 'input_text': {
      const text = block['text'];
      return typeof text === 'string' && text.length > 0 ? { text } : null;
    }
    case 'image_url': {
      const image = block['image_url'];
      const url = typeof image === 'string' ? image : isObject(image) ? image['url'] : undefined;
      if (typeof url !== 'string') throw new GatewayError('bad_request', 'image_url.url is required.', { param: `${param}.image_url.url` });
      return mediaPart(url, 'image/jpeg', `${param}.image_url.url`);
    }
    case 'input_audio': {
      const audio = block['input_audio'];
      if (!isObject(audio) || typeof audio['data'] !== 'string') {
        throw new GatewayError('bad_request', 'input_audio.data is required.', { param: `${param}.input_audio` });
      }
      const format = typeof audio['format'] === 'string' ? audio['format'] : 'wav';
      return { inlineData: { mimeType: `audio/${format}`, data: audio['data'] } };
    }
    case 'file': {
      const file = block['file'];
      if (!isObject(file)) throw new GatewayError('bad_request', 'file is required.', { param: `${param}.file` });
      const filename = typeof file['filename'] === 'string' ? file['filename'] : undefined;
      const fileData = file['file_data'];
      if (typeof fileData === 'string') {
        if (fileData.startsWith('data:')) return mediaPart(fileData, 'application/pdf', `${param}.file.file_data`);
        return { inlineData: { mimeType: mimeFromName(filename, 'application/pdf'), data: fileData } };
      }
      const fileId = file['file_id'];
      if (typeof fileId === 'string') return mediaPart(fileId, mimeFromName(filename, 'application/pdf'), `${param}.file.file_id`);
      throw new GatewayError('bad_request', 'file needs file_data or file_id.', { param: `${param}.file` });
    }
    case 'refusal':
      return null;
    default:
      throw new GatewayError('bad_request', `Content blocks of type ${String(block['type'])} cannot be sent to a Gemini model.`, {
        param: `${param}.type`,
      });
  }
}

function contentToParts(content: ChatMessage['content'], param: string): GeminiPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content.length > 0 ? [{ text: content }] : [];
  const parts: GeminiPart[] = [];
  content.forEach((block, index) => {
    const part = contentBlockToPart(block, `${param}[${index}]`);
    if (part) parts.push(part);
  });
  return parts;
}

function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block) => (typeof block['text'] === 'string' ? block['text'] : '')).join('');
}

/** A tool's output as the JSON object functionResponse.response must be. */
function toolResponseObject(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) return parsed;
    return { result: parsed };
  } catch {
    return { result: text };
  }
}

function thoughtSignatureOf(call: unknown): string | undefined {
  if (!isObject(call)) return undefined;
  const extra = call['extra_content'];
  const google = isObject(extra) ? extra['google'] : undefined;
  const signature = isObject(google) ? google['thought_signature'] : undefined;
  return typeof signature === 'string' ? signature : undefined;
}

export function convertToGeminiContents(messages: readonly ChatMessage[]): GeminiConversation {
  const systemParts: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const functionNameByCallId = new Map<string, string>();

  const push = (role: GeminiContent['role'], parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content);
        if (text.length > 0) systemParts.push({ text });
        return;
      }
      case 'user':
        push('user', contentToParts(message.content, `${param}.content`));
        return;
      case 'assistant': {
        const parts = contentToParts(message.content, `${param}.content`);
        (message.tool_calls ?? []).forEach((call, callIndex) => {
          const name = call.function?.name;
          if (typeof name !== 'string' || name.length === 0) {
            throw new GatewayError('bad_request', 'Every tool call needs a function name.', { param: `${param}.tool_calls[${callIndex}].function.name` });
          }
          let args: unknown = {};
          const raw = call.function.arguments;
          if (typeof raw === 'string' && raw.trim().length > 0) {
            try {
              args = JSON.parse(raw);
            } catch {
              throw new GatewayError('bad_request', 'Tool call arguments must be a JSON object string.', {
                param: `${param}.tool_calls[${callIndex}].function.arguments`,
              });
            }
          }
          if (!isObject(args)) {
            throw new GatewayError('bad_request', 'Tool call arguments must be a JSON object string.', {
              param: `${param}.tool_calls[${callIndex}].function.arguments`,
            });
          }
          if (typeof call.id === 'string') functionNameByCallId.set(call.id, name);
          const part: GeminiPart = { functionCall: { name, args } };
          // Only the first call of a turn carries the signature (parallel calls share it).
          const signature = thoughtSignatureOf(call) ?? (callIndex === 0 ? PLACEHOLDER_THOUGHT_SIGNATURE : undefined);
          if (signature) part.thoughtSignature = signature;
          parts.push(part);
        });
        push('model', parts);
        return;
      }
      case 'tool': {
        const callId = message.tool_call_id;
        const name = (callId !== undefined ? functionNameByCallId.get(callId) : undefined) ?? (typeof message.name === 'string' ? message.name : undefined);
        if (!name) {
          throw new GatewayError('bad_request', 'The tool message answers no tool call of an earlier assistant message.', {
            param: `${param}.tool_call_id`,
          });
        }
        push('user', [{ functionResponse: { name, response: toolResponseObject(textOf(message.content)) } }]);
        return;
      }
      default:
        throw new GatewayError('bad_request', `Unknown message role ${String((message as { role?: unknown }).role)}.`, { param: `${param}.role` });
    }
  });

  const conversation: GeminiConversation = { contents };
  if (systemParts.length > 0) conversation.systemInstruction = { parts: systemParts };
  return conversation;
}
