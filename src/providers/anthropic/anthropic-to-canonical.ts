// Anthropic message (a whole reply) → canonical ModelResponse, and the stop-reason and usage mappings the
// stream translator shares (https://docs.anthropic.com/en/api/messages, .../handling-stop-reasons).
import type { AssistantPart, FinishReason, JsonObject, ModelResponse, Usage } from '../../canonical/model';
import { jsonToolInputToText, type JsonToolPlan } from './anthropic-json-tool';
import type { AnthropicMessage, AnthropicStopReason, AnthropicUsage } from './anthropic-wire-types';

export function mapAnthropicFinishReason(reason: AnthropicStopReason | null | undefined): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // pause_turn (a server tool paused a long turn: the caller resends to continue) and reasons added
      // later; rawFinishReason keeps the upstream's word.
      return 'other';
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * Anthropic usage → canonical. Anthropic's input_tokens excludes cache reads and writes; canonical
 * inputTokens is the whole prompt, with the cached part reported again in cachedInputTokens.
 */
export function mapAnthropicUsage(usage: AnthropicUsage | undefined): Usage {
  const cacheRead = count(usage?.cache_read_input_tokens);
  const cacheCreation = count(usage?.cache_creation_input_tokens);
  const mapped: Usage = { inputTokens: count(usage?.input_tokens) + cacheRead + cacheCreation, outputTokens: count(usage?.output_tokens) };
  if (cacheRead > 0) mapped.cachedInputTokens = cacheRead;
  if (cacheCreation > 0) mapped.cacheCreationInputTokens = cacheCreation;
  return mapped;
}

/** Streams report usage in message_start (input) and message_delta (cumulative): keep the latest non-null values. */
export function mergeAnthropicUsage(into: AnthropicUsage, update: AnthropicUsage | undefined): void {
  if (!update) return;
  for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
    const value = update[key];
    if (typeof value === 'number') into[key] = value;
  }
}

export interface ReplyContext {
  jsonTool: JsonToolPlan | null;
  now?: () => number;
}

const isRecord = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** What the caller is told of a refusal when the upstream gives no explanation of its own. */
export const UNEXPLAINED_REFUSAL = 'The model declined to continue this response.';

/**
 * The refusal a reply that stopped with `refusal` ends with: `stop_details.explanation` (whole reply, or
 * the stream's message_delta), else a plain statement. Text written before the refusal stays text; the
 * refusal is a part of its own after it.
 * (https://platform.claude.com/docs/test-and-evaluate/strengthen-guardrails/handle-streaming-refusals)
 */
export function refusalOf(stopDetails: unknown): string {
  const explanation = isRecord(stopDetails) ? stopDetails['explanation'] : undefined;
  return typeof explanation === 'string' && explanation !== '' ? explanation : UNEXPLAINED_REFUSAL;
}

export function anthropicToCanonical(message: AnthropicMessage, context: ReplyContext): ModelResponse {
  const content: AssistantPart[] = [];
  const jsonParts = new Set<AssistantPart>();
  let sawToolCall = false;
  for (const block of Array.isArray(message.content) ? message.content : []) {
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: text(block['text']) });
        break;
      case 'thinking': {
        const signature = block['signature'];
        content.push(
          typeof signature === 'string'
            ? { type: 'reasoning', text: text(block['thinking']), signature }
            : { type: 'reasoning', text: text(block['thinking']) },
        );
        break;
      }
      case 'redacted_thinking':
        content.push({ type: 'reasoning', text: '', redactedData: text(block['data']) });
        break;
      case 'tool_use': {
        const name = text(block['name']);
        if (context.jsonTool && name === context.jsonTool.name) {
          const part: AssistantPart = { type: 'text', text: jsonToolInputToText(block['input'], context.jsonTool) };
          jsonParts.add(part);
          content.push(part);
        } else {
          sawToolCall = true;
          content.push({ type: 'tool-call', id: text(block['id']), name, arguments: JSON.stringify(block['input'] ?? {}) });
        }
        break;
      }
      default:
        // Server tool calls and their results, container uploads, blocks added later: the Messages
        // format's own, carried as they are.
        if (isRecord(block)) content.push({ type: 'native', format: 'messages', value: block });
    }
  }
  const usedJsonTool = jsonParts.size > 0;
  // When the JSON tool answered, the text is its input alone: no prose around it (rule 4).
  const parts = usedJsonTool ? content.filter((p) => p.type !== 'text' || jsonParts.has(p)) : content;
  if (message.stop_reason === 'refusal') parts.push({ type: 'text', text: refusalOf(message['stop_details']), refusal: true });
  let finishReason = mapAnthropicFinishReason(message.stop_reason);
  let rawFinishReason = message.stop_reason ?? undefined;
  if (usedJsonTool && !sawToolCall && finishReason === 'tool_calls') {
    // The JSON tool is ours: to the caller the model simply finished its answer.
    finishReason = 'stop';
    rawFinishReason = 'end_turn';
  }
  const response: ModelResponse = {
    id: message.id,
    model: message.model,
    created: Math.floor((context.now ?? Date.now)() / 1000),
    content: parts,
    finishReason,
    usage: mapAnthropicUsage(message.usage),
  };
  if (rawFinishReason !== undefined) response.rawFinishReason = rawFinishReason;
  if ('stop_sequence' in message) response.stopSequence = message.stop_sequence;
  return response;
}
