// The Responses `response` object (Open Responses ResponseResource): the reply's output items and
// usage, its status, and the request fields every response object echoes, normalised to the values
// in effect (OpenAI's defaults where the caller set nothing: temperature and top_p 1, truncation
// `disabled`, parallel_tool_calls true, text format `text`, service_tier `default`), so that each
// required field of the schema is present with its type.
import type { FinishReason, JsonObject, ModelResponse, Usage } from '../../canonical/model';
import { mintId } from './ids';
import { outputItemsOf } from './output-items';
import { isRecord } from './request-errors';
import type { EchoedRequestFields, MessageItem, OutputItem, ResponseObject, ResponseStatus, ResponseUsage } from './wire-types';

/** What a response object is built from besides the reply: the caller's request and our ids. */
export interface ResponseContext {
  /** The caller's request body; its fields are echoed (never changed). */
  request: JsonObject;
  /** The response id (`resp_…`); minted when absent. */
  id?: string;
  /** The model id as the caller named it; `request.model` when absent. */
  model?: string;
  /** Unix seconds the response was created; now when absent. */
  createdAt?: number;
  /** The stored conversation, echoed as `conversation: {id}`. */
  conversationId?: string;
  /** Milliseconds clock (tests). */
  now?: () => number;
}

const seconds = (ms: number): number => Math.floor(ms / 1000);

const stringOr = <T>(value: unknown, fallback: T): string | T => (typeof value === 'string' ? value : fallback);
const numberOr = <T>(value: unknown, fallback: T): number | T => (typeof value === 'number' ? value : fallback);
const booleanOr = (value: unknown, fallback: boolean): boolean => (typeof value === 'boolean' ? value : fallback);

/** A function tool as the schema requires it (description, parameters and strict present, null when unset). */
function echoTool(tool: JsonObject): JsonObject {
  if (tool['type'] !== 'function') return tool;
  return { ...tool, description: tool['description'] ?? null, parameters: tool['parameters'] ?? null, strict: tool['strict'] ?? null };
}

function echoToolChoice(choice: unknown): string | JsonObject {
  if (typeof choice === 'string') return choice;
  if (!isRecord(choice)) return 'auto';
  if (choice['type'] === 'allowed_tools' && choice['mode'] === undefined) return { ...choice, mode: 'auto' };
  return choice;
}

function echoText(text: unknown): JsonObject {
  const holder = isRecord(text) ? text : {};
  let format = isRecord(holder['format']) ? holder['format'] : { type: 'text' };
  if (format['type'] === 'json_schema') format = { ...format, description: format['description'] ?? null, strict: format['strict'] ?? false };
  return { ...holder, format, verbosity: stringOr(holder['verbosity'], 'medium') };
}

/** The request fields a response object carries, computed once per request. */
export function echoRequestFields(request: JsonObject): EchoedRequestFields {
  const reasoning = isRecord(request['reasoning']) ? request['reasoning'] : {};
  const metadata = request['metadata'];
  return {
    previous_response_id: stringOr(request['previous_response_id'], null),
    instructions: stringOr(request['instructions'], null),
    tools: Array.isArray(request['tools']) ? request['tools'].filter(isRecord).map(echoTool) : [],
    tool_choice: echoToolChoice(request['tool_choice']),
    truncation: stringOr(request['truncation'], 'disabled'),
    parallel_tool_calls: booleanOr(request['parallel_tool_calls'], true),
    text: echoText(request['text']),
    top_p: numberOr(request['top_p'], 1),
    presence_penalty: numberOr(request['presence_penalty'], 0),
    frequency_penalty: numberOr(request['frequency_penalty'], 0),
    top_logprobs: numberOr(request['top_logprobs'], 0),
    temperature: numberOr(request['temperature'], 1),
    reasoning: { effort: stringOr(reasoning['effort'], null), summary: stringOr(reasoning['summary'] ?? reasoning['generate_summary'], null) },
    max_output_tokens: numberOr(request['max_output_tokens'], null),
    max_tool_calls: numberOr(request['max_tool_calls'], null),
    store: booleanOr(request['store'], false),
    background: booleanOr(request['background'], false),
    service_tier: stringOr(request['service_tier'], 'default'),
    metadata: isRecord(metadata) ? metadata : {},
    safety_identifier: stringOr(request['safety_identifier'], null),
    prompt_cache_key: stringOr(request['prompt_cache_key'], null),
    user: stringOr(request['user'], null),
  };
}

export function usageToResponses(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** How a reply that finished ends: completed, incomplete (and why), or failed. */
export interface Outcome {
  status: Exclude<ResponseStatus, 'in_progress'>;
  incompleteReason?: 'max_output_tokens' | 'content_filter';
}

export function outcomeOf(finishReason: FinishReason): Outcome {
  switch (finishReason) {
    case 'length':
      return { status: 'incomplete', incompleteReason: 'max_output_tokens' };
    case 'content_filter':
      return { status: 'incomplete', incompleteReason: 'content_filter' };
    case 'error':
      return { status: 'failed' };
    case 'stop':
    case 'tool_calls':
    case 'other':
      return { status: 'completed' };
  }
}

/** The error a reply that finished with `error` reports (the provider said no more). */
export const FINISHED_WITH_ERROR = { code: 'server_error', message: 'The model stopped with an error before its reply was complete.' };

export interface ResponseState {
  id: string;
  model: string;
  createdAt: number;
  completedAt: number | null;
  status: ResponseStatus;
  incompleteReason?: string | undefined;
  error?: { code: string; message: string } | undefined;
  output: OutputItem[];
  usage: ResponseUsage | null;
}

/** Assembles a response object from its state and the echoed request fields. */
export function assembleResponseObject(state: ResponseState, echoed: EchoedRequestFields, conversationId: string | undefined): ResponseObject {
  const response: ResponseObject = {
    id: state.id,
    object: 'response',
    created_at: state.createdAt,
    completed_at: state.completedAt,
    status: state.status,
    incomplete_details: state.incompleteReason === undefined ? null : { reason: state.incompleteReason },
    error: state.error ?? null,
    model: state.model,
    output: state.output,
    usage: state.usage,
    ...echoed,
  };
  if (conversationId !== undefined) response.conversation = { id: conversationId };
  return response;
}

/** The caller's model id: the context's, else the request's. */
export function callerModel(ctx: ResponseContext): string {
  return ctx.model ?? stringOr(ctx.request['model'], '');
}

/** A whole canonical reply → the Responses response object. */
export function canonicalToResponseObject(response: ModelResponse, ctx: ResponseContext): ResponseObject {
  const now = seconds((ctx.now ?? Date.now)());
  const outcome = outcomeOf(response.finishReason);
  const state: ResponseState = {
    id: ctx.id ?? mintId('resp'),
    model: callerModel(ctx),
    // The gateway's object, made now (as a streamed one is): not the upstream's clock, nor a provider's fixed value.
    createdAt: ctx.createdAt ?? now,
    completedAt: outcome.status === 'completed' ? now : null,
    status: outcome.status,
    incompleteReason: outcome.incompleteReason,
    error: outcome.status === 'failed' ? FINISHED_WITH_ERROR : undefined,
    output: outputItemsOf(response.content),
    usage: usageToResponses(response.usage),
  };
  // Generation stopped in the last item (token limit, content filter): a message or call cut short is
  // incomplete. A refusal is not cut short: it is why generation stopped, said whole.
  const last = state.output.at(-1);
  const refusal = last?.type === 'message' && (last as MessageItem).content.some((part) => part.type === 'refusal');
  if (outcome.status === 'incomplete' && !refusal && (last?.type === 'message' || last?.type === 'function_call')) {
    state.output[state.output.length - 1] = { ...last, status: 'incomplete' } as OutputItem;
  }
  return assembleResponseObject(state, echoRequestFields(ctx.request), ctx.conversationId);
}
