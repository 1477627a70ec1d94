// Canonical messages to Gemini `contents` + `systemInstruction`.
// - system messages (wherever they appear) become systemInstruction parts, one per message, in order;
// - user parts: text, images, files and documents (gemini-media.ts); audio and video arrive as files;
// - assistant text and tool calls become a `model` turn of text and functionCall parts; reasoning text
//   is not sent (Gemini's thought summaries are output only), but its signature is: Gemini's thought
//   signature comes back to the caller as a reasoning part placed just before the part that carried it
//   (gemini-reply-to-parts.ts), and goes out again on the part that follows it here (one with no part
//   after it is dropped: Gemini validates only the signatures of function calls);
// - tool results become functionResponse parts named after the function of the earlier call whose id
//   they answer (Gemini matches responses by name, the canonical model by id); media in a result
//   follows it in the same turn;
// - consecutive turns of one role are merged, so parallel tool results form one turn as Gemini expects.
import type { AssistantPart, JsonObject, Message, ToolResultPart, UserPart } from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import { parseBoundedJson } from '../../http/json-depth';
import { mediaSourceToPart } from './gemini-media';
import type { GeminiContent, GeminiPart } from './gemini-wire-types';

/**
 * Gemini 3 rejects a replayed function call without the thought signature it came with. When a caller
 * dropped it, this documented placeholder keeps the request valid
 * (https://ai.google.dev/gemini-api/docs/thought-signatures).
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

export interface GeminiConversation {
  systemInstruction?: { parts: GeminiPart[] };
  contents: GeminiContent[];
}

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

function userPart(part: UserPart, param: string): GeminiPart | null {
  switch (part.type) {
    case 'text':
      return part.text.length > 0 ? { text: part.text } : null;
    case 'image':
      return mediaSourceToPart(part.source, 'image/jpeg', undefined, param);
    case 'file':
      return mediaSourceToPart(part.source, 'application/pdf', part.filename, param);
    case 'document':
      return mediaSourceToPart(part.source, 'application/pdf', part.title, param);
    case 'native':
      throw new GatewayError('bad_request', `A content part of type ${String(part.value['type'])} cannot be sent to a Gemini model.`, { param });
  }
}

function assistantParts(content: readonly AssistantPart[], param: string): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let signature: string | undefined;
  let calls = 0;
  content.forEach((part, index) => {
    switch (part.type) {
      case 'reasoning':
        if (part.signature !== undefined) signature = part.signature;
        return;
      case 'text': {
        if (part.text.length === 0) return;
        const text: GeminiPart = { text: part.text };
        if (signature !== undefined) text.thoughtSignature = signature;
        signature = undefined;
        parts.push(text);
        return;
      }
      case 'tool-call': {
        let args: unknown = {};
        if (part.arguments.trim().length > 0) {
          try {
            args = parseBoundedJson(part.arguments);
          } catch {
            args = undefined;
          }
        }
        if (!isObject(args)) {
          throw new GatewayError('bad_request', 'Tool call arguments must be a JSON object string.', { param: `${param}[${index}].arguments` });
        }
        const call: GeminiPart = { functionCall: { name: part.name, args } };
        // The first call of a turn carries the signature (parallel calls share it).
        const callSignature = signature ?? (calls === 0 ? SKIP_THOUGHT_SIGNATURE : undefined);
        if (callSignature !== undefined) call.thoughtSignature = callSignature;
        signature = undefined;
        calls += 1;
        parts.push(call);
        return;
      }
      case 'native':
        throw new GatewayError('bad_request', `An assistant part of type ${String(part.value['type'])} cannot be sent to a Gemini model.`, {
          param: `${param}[${index}]`,
        });
    }
  });
  return parts;
}

/** A tool's text output as the JSON object functionResponse.response must be. */
function responseObject(text: string, isError: boolean): Record<string, unknown> {
  let value: unknown = text;
  try {
    value = parseBoundedJson(text);
  } catch {
    // plain text output
  }
  // Gemini reads `error` as the call's failure; other output keeps its object form, or goes under `result`.
  if (isError) return { error: value };
  return isObject(value) ? value : { result: value };
}

function toolResultParts(result: ToolResultPart, name: string, param: string): GeminiPart[] {
  if (typeof result.output === 'string') return [{ functionResponse: { name, response: responseObject(result.output, result.isError === true) } }];
  let text = '';
  const media: GeminiPart[] = [];
  result.output.forEach((part, index) => {
    if (part.type === 'text') text += part.text;
    else {
      const converted = userPart(part, `${param}.output[${index}]`);
      if (converted) media.push(converted);
    }
  });
  return [{ functionResponse: { name, response: responseObject(text, result.isError === true) } }, ...media];
}

export function convertModelMessagesToGemini(messages: readonly Message[]): GeminiConversation {
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
    const param = `messages[${index}].content`;
    switch (message.role) {
      case 'system': {
        const text = message.content.map((part) => part.text).join('');
        if (text.length > 0) systemParts.push({ text });
        return;
      }
      case 'user': {
        const parts: GeminiPart[] = [];
        message.content.forEach((part, partIndex) => {
          const converted = userPart(part, `${param}[${partIndex}]`);
          if (converted) parts.push(converted);
        });
        push('user', parts);
        return;
      }
      case 'assistant':
        for (const part of message.content) if (part.type === 'tool-call') functionNameByCallId.set(part.id, part.name);
        push('model', assistantParts(message.content, param));
        return;
      case 'tool': {
        const parts: GeminiPart[] = [];
        message.content.forEach((result, resultIndex) => {
          const name = functionNameByCallId.get(result.callId);
          if (name === undefined) {
            throw new GatewayError('bad_request', 'A tool result answers no tool call of an earlier assistant message.', {
              param: `${param}[${resultIndex}].callId`,
            });
          }
          parts.push(...toolResultParts(result, name, `${param}[${resultIndex}]`));
        });
        push('user', parts);
        return;
      }
    }
  });

  const conversation: GeminiConversation = { contents };
  if (systemParts.length > 0) conversation.systemInstruction = { parts: systemParts };
  return conversation;
}
