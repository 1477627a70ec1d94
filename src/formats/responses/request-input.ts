// Responses `input` (spec "Responses input items") → canonical messages. A string is one user
// message. Items: `message` (user, system, developer, assistant; string or part content),
// `function_call` and `reasoning` (the model's side of earlier turns: consecutive ones and assistant
// messages merge into one assistant turn, as chat and Messages providers need them), and
// `function_call_output` (consecutive ones merge into one tool turn). Any other item type
// (`item_reference`, `web_search_call`, `computer_call_output`, ...) is kept as a native part that
// only a provider speaking Responses can send; every other provider refuses it with a 400 naming it.
import type { AssistantPart, Message, NativePart, ReasoningPart, TextPart, ToolCallPart, ToolResultPart, UserPart } from '../../canonical/model';
import { decodeReasoningState } from './reasoning-envelope';
import { filePart, imagePart, toolOutputPart } from './media-parts';
import { isRecord, optionalString, requiredString, unreadable } from './request-errors';
import { mcpFunctionName } from './request-tools';

/** Items written by the model (tool calls of hosted and provider tools, MCP listings): assistant side. */
const MODEL_ITEM = /_call$|^mcp_list_tools$|^mcp_approval_request$|^compaction$/;
const TEXT_PARTS: ReadonlySet<unknown> = new Set(['input_text', 'output_text', 'text']);

/** Appends messages, merging an assistant-side item into the assistant turn before it (and tool results alike). */
class Turns {
  readonly messages: Message[] = [];

  assistant(part: AssistantPart): void {
    const last = this.messages.at(-1);
    if (last?.role === 'assistant') last.content.push(part);
    else this.messages.push({ role: 'assistant', content: [part] });
  }

  toolResult(part: ToolResultPart): void {
    const last = this.messages.at(-1);
    if (last?.role === 'tool') last.content.push(part);
    else this.messages.push({ role: 'tool', content: [part] });
  }
}

function native(value: Record<string, unknown>): NativePart {
  return { type: 'native', format: 'responses', value };
}

function textOf(part: Record<string, unknown>, key: string, param: string): TextPart {
  const text = part[key];
  if (typeof text !== 'string') throw unreadable(`${param}.${key}`, 'must be a string.');
  return { type: 'text', text };
}

function userPart(part: unknown, param: string): UserPart {
  if (!isRecord(part)) throw unreadable(param, 'must be a content part object.');
  const type = part['type'];
  if (TEXT_PARTS.has(type)) return textOf(part, 'text', param);
  if (type === 'input_image') return imagePart(part, param);
  if (type === 'input_file') return filePart(part, param);
  if (typeof type !== 'string') throw unreadable(`${param}.type`, 'must be a string.');
  return native(part); // input_audio, input_video, ...: for a provider that speaks Responses
}

function assistantPart(part: unknown, param: string): AssistantPart {
  if (!isRecord(part)) throw unreadable(param, 'must be a content part object.');
  const type = part['type'];
  if (TEXT_PARTS.has(type)) return textOf(part, 'text', param);
  // A refusal in history is what the model said; the canonical model has no refusal part.
  if (type === 'refusal') return textOf(part, 'refusal', param);
  if (typeof type !== 'string') throw unreadable(`${param}.type`, 'must be a string.');
  return native(part);
}

/** `content`: a string (one text part) or an array of parts read by `read`. */
function contentOf<P>(item: Record<string, unknown>, param: string, read: (part: unknown, param: string) => P, text: (text: string) => P): P[] {
  const content = item['content'];
  if (typeof content === 'string') return [text(content)];
  if (!Array.isArray(content)) throw unreadable(`${param}.content`, 'must be a string or an array of content parts.');
  return content.map((part, j) => read(part, `${param}.content[${j}]`));
}

const asText = (text: string): TextPart => ({ type: 'text', text });

function systemPart(part: unknown, param: string): TextPart {
  if (!isRecord(part) || !TEXT_PARTS.has(part['type'])) throw unreadable(param, 'a system or developer message takes text parts only (input_text).');
  return textOf(part, 'text', param);
}

function convertMessage(item: Record<string, unknown>, param: string, turns: Turns): void {
  const role = item['role'];
  switch (role) {
    case 'user':
      turns.messages.push({ role: 'user', content: contentOf<UserPart>(item, param, userPart, asText) });
      return;
    case 'system':
    case 'developer': {
      const message: Message = { role: 'system', content: contentOf(item, param, systemPart, asText) };
      if (role === 'developer') message.developer = true;
      turns.messages.push(message);
      return;
    }
    case 'assistant':
      for (const part of contentOf<AssistantPart>(item, param, assistantPart, asText)) turns.assistant(part);
      return;
    default:
      throw unreadable(`${param}.role`, 'must be user, system, developer or assistant.');
  }
}

function functionCall(item: Record<string, unknown>, param: string): ToolCallPart {
  const call: ToolCallPart = {
    type: 'tool-call',
    id: requiredString(item, 'call_id', param),
    name: requiredString(item, 'name', param),
    arguments: requiredString(item, 'arguments', param),
  };
  const itemId = optionalString(item, 'id', param);
  if (itemId !== undefined) call.itemId = itemId;
  return call;
}

function functionCallOutput(item: Record<string, unknown>, param: string): ToolResultPart {
  const callId = requiredString(item, 'call_id', param);
  const output = item['output'];
  if (typeof output === 'string') return { type: 'tool-result', callId, output };
  if (!Array.isArray(output)) throw unreadable(`${param}.output`, 'must be a string or an array of input_text, input_image and input_file parts.');
  return { type: 'tool-result', callId, output: output.map((part, k) => toolOutputPart(part, `${param}.output[${k}]`)) };
}

/** The texts of `summary_text` (or `reasoning_text`) parts. */
function reasoningTexts(item: Record<string, unknown>, key: 'summary' | 'content', param: string): string[] {
  const parts = item[key];
  if (parts === undefined || parts === null) return [];
  if (!Array.isArray(parts)) throw unreadable(`${param}.${key}`, 'must be an array of text parts.');
  return parts.map((part, k) => {
    if (!isRecord(part) || typeof part['text'] !== 'string') throw unreadable(`${param}.${key}[${k}].text`, 'must be a string.');
    return part['text'];
  });
}

/** A reasoning item: its readable text (reasoning content, else the summaries), id and opaque state. */
function reasoning(item: Record<string, unknown>, param: string): ReasoningPart {
  const summary = reasoningTexts(item, 'summary', param);
  const content = reasoningTexts(item, 'content', param);
  const part: ReasoningPart = { type: 'reasoning', text: content.length > 0 ? content.join('') : summary.join('\n\n') };
  if (content.length === 0 && summary.length > 0) part.summary = summary;
  const id = optionalString(item, 'id', param);
  if (id !== undefined) part.id = id;
  const encrypted = optionalString(item, 'encrypted_content', param);
  if (encrypted !== undefined) Object.assign(part, decodeReasoningState(encrypted, `${param}.encrypted_content`));
  return part;
}

/**
 * A server-side tool call the gateway ran (`svc_call`, `mcp_call`): to a model it is its own call and
 * the result it was shown, so any provider can read history holding one. One still running (no
 * output, no error) is left out: it has no result to show.
 */
function serverCall(item: Record<string, unknown>, param: string, turns: Turns): void {
  const id = optionalString(item, 'call_id', param) ?? requiredString(item, 'id', param);
  const tool = requiredString(item, 'name', param);
  // An MCP tool is offered to models under its server's label (request-tools.ts mcpFunctionName).
  const name = item['type'] === 'mcp_call' ? mcpFunctionName(requiredString(item, 'server_label', param), tool) : tool;
  const output = item['output'];
  const error = item['error'];
  if (typeof output !== 'string' && typeof error !== 'string') return;
  const args = item['arguments'];
  turns.assistant({ type: 'tool-call', id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) });
  if (typeof output === 'string') turns.toolResult({ type: 'tool-result', callId: id, output });
  else turns.toolResult({ type: 'tool-result', callId: id, output: String(error), isError: true });
}

/** Items about MCP servers that only the gateway's tool loop reads (it lists, asks and continues itself). */
const MCP_BOOKKEEPING: ReadonlySet<unknown> = new Set(['mcp_list_tools', 'mcp_approval_request', 'mcp_approval_response']);

function convertItem(item: unknown, param: string, turns: Turns): void {
  if (!isRecord(item)) throw unreadable(param, 'must be an input item object.');
  const type = item['type'];
  // An item without a type but with a role is a message (OpenAI's EasyInputMessage).
  if (type === 'message' || ((type === undefined || type === null) && item['role'] !== undefined)) return convertMessage(item, param, turns);
  switch (type) {
    case 'function_call':
      return turns.assistant(functionCall(item, param));
    case 'function_call_output':
      return turns.toolResult(functionCallOutput(item, param));
    case 'reasoning':
      return turns.assistant(reasoning(item, param));
    case 'svc_call':
    case 'mcp_call':
      return serverCall(item, param, turns);
  }
  if (MCP_BOOKKEEPING.has(type)) return;
  if (typeof type !== 'string') throw unreadable(`${param}.type`, 'must be a string.');
  if (MODEL_ITEM.test(type)) turns.assistant(native(item));
  else turns.messages.push({ role: 'user', content: [native(item)] });
}

/** `input` (absent or null: no messages; the handler decides whether that is allowed). */
export function inputToMessages(input: unknown): Message[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }];
  if (!Array.isArray(input)) throw unreadable('input', 'must be a string or an array of input items.');
  const turns = new Turns();
  input.forEach((item, i) => convertItem(item, `input[${i}]`, turns));
  return turns.messages;
}
