// Canonical reply parts → Responses output items, shared by the whole-response converter and the
// event stream so both write the same items: a text block is a `message` with one `output_text`
// part (a refusal one `refusal` part), a tool call a `function_call`, reasoning a `reasoning` item whose readable text is a
// `summary_text` part (what Responses clients display) and whose opaque state is `encrypted_content`.
// Native parts of the Responses format are items as the upstream wrote them; native parts of another
// format (an Anthropic server tool block) have no Responses item and are left out.
import type { AssistantPart, JsonObject, ReasoningPart } from '../../canonical/model';
import { mintId } from './ids';
import { encodeReasoningState } from './reasoning-envelope';
import type {
  FunctionCallItem,
  ItemStatus,
  McpCallItem,
  MessageContent,
  MessageItem,
  OutputItem,
  OutputTextContent,
  RefusalContent,
  ReasoningItem,
  ServerCallStatus,
  SvcCallItem,
} from './wire-types';

export function outputText(text: string): OutputTextContent {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function refusalContent(refusal: string): RefusalContent {
  return { type: 'refusal', refusal };
}

/** The content part of a text block: its text, or its refusal. */
export function messageContent(text: string, refusal: boolean | undefined): MessageContent {
  return refusal === true ? refusalContent(text) : outputText(text);
}

export function messageItem(id: string, status: ItemStatus, content: MessageContent[]): MessageItem {
  return { id, type: 'message', status, role: 'assistant', content };
}

export function functionCallItem(id: string, status: ItemStatus, callId: string, name: string, args: string): FunctionCallItem {
  return { id, type: 'function_call', status, call_id: callId, name, arguments: args };
}

export function svcCallItem(
  id: string,
  status: ServerCallStatus,
  callId: string,
  name: string,
  args: string,
  output: string | null,
  error: string | null,
): SvcCallItem {
  return { id, type: 'svc_call', status, call_id: callId, name, arguments: args, output, error };
}

export function mcpCallItem(
  id: string,
  status: ServerCallStatus,
  serverLabel: string,
  name: string,
  args: string,
  output: string | null,
  error: string | null,
): McpCallItem {
  return { id, type: 'mcp_call', status, server_label: serverLabel, name, arguments: args, output, error };
}

export function reasoningItem(id: string, summaries: string[], state: Pick<ReasoningPart, 'signature' | 'redactedData' | 'encryptedContent'>): ReasoningItem {
  const item: ReasoningItem = { id, type: 'reasoning', summary: summaries.map((text) => ({ type: 'summary_text', text })) };
  const encrypted = encodeReasoningState(state);
  if (encrypted !== undefined) item.encrypted_content = encrypted;
  return item;
}

/** A native part's value when it is a Responses item (has a string `type`), else undefined. */
export function nativeItem(format: string, value: JsonObject): OutputItem | undefined {
  return format === 'responses' && typeof value['type'] === 'string' ? (value as OutputItem) : undefined;
}

/** The output items of a whole reply, in content order. */
export function outputItemsOf(content: AssistantPart[]): OutputItem[] {
  const items: OutputItem[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'text':
        items.push(messageItem(mintId('msg'), 'completed', [messageContent(part.text, part.refusal)]));
        break;
      case 'tool-call':
        items.push(functionCallItem(part.itemId ?? mintId('fc'), 'completed', part.id, part.name, part.arguments));
        break;
      case 'reasoning': {
        const summaries = part.summary ?? (part.text === '' ? [] : [part.text]);
        items.push(reasoningItem(part.id ?? mintId('rs'), summaries, part));
        break;
      }
      case 'native': {
        const item = nativeItem(part.format, part.value);
        if (item !== undefined) items.push(item);
        break;
      }
    }
  }
  return items;
}
