// The Responses wire objects this format writes: the response object, its output items and the SSE
// events. Shapes follow the Open Responses specification (openresponses/openresponses,
// public/openapi/openapi.json: ResponseResource, ItemField, the *StreamingEvent schemas) and what
// OpenAI's API sends beyond it (`user`, `logprobs` on text deltas, `name` on the arguments' done
// event, the error event's top-level `code`/`message`/`param`).
import type { JsonObject } from '../../canonical/model';

/** Status of an output item. */
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** `output_text` content of an assistant message item. */
export interface OutputTextContent {
  type: 'output_text';
  text: string;
  annotations: JsonObject[];
  logprobs: JsonObject[];
}

/** `refusal` content of an assistant message item: the model declined, and says why. */
export interface RefusalContent {
  type: 'refusal';
  refusal: string;
}

/** A content part of an assistant message item. */
export type MessageContent = OutputTextContent | RefusalContent;

export interface SummaryTextContent {
  type: 'summary_text';
  text: string;
}

export interface MessageItem {
  id: string;
  type: 'message';
  status: ItemStatus;
  role: 'assistant';
  content: MessageContent[];
}

export interface FunctionCallItem {
  id: string;
  type: 'function_call';
  status: ItemStatus;
  call_id: string;
  name: string;
  arguments: string;
}

export interface ReasoningItem {
  id: string;
  type: 'reasoning';
  summary: SummaryTextContent[];
  /** OpenAI's opaque reasoning, or the gateway's envelope of another provider's (reasoning-envelope.ts). */
  encrypted_content?: string;
}

/** Status of a server-side tool call item (`svc_call`, `mcp_call`). */
export type ServerCallStatus = 'in_progress' | 'completed' | 'failed';

/**
 * A hosted tool call the gateway executed (spec "Hosted tools", Events rule 1): the tool's type as
 * `name`, the model's arguments, and the output the model was shown, or the error it was told.
 */
export interface SvcCallItem {
  id: string;
  type: 'svc_call';
  status: ServerCallStatus;
  call_id: string;
  name: string;
  arguments: string;
  output: string | null;
  error: string | null;
}

/** A tool call on a remote MCP server, made by the gateway (OpenAI's `mcp_call` item). */
export interface McpCallItem {
  id: string;
  type: 'mcp_call';
  status: ServerCallStatus;
  server_label: string;
  name: string;
  arguments: string;
  output: string | null;
  error: string | null;
  approval_request_id?: string | null;
}

/** An item of the Responses vocabulary the canonical model does not describe, as the upstream wrote it. */
export type NativeItem = JsonObject & { type: string };

export type OutputItem = MessageItem | FunctionCallItem | ReasoningItem | SvcCallItem | McpCallItem | NativeItem;

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The request fields every response object echoes (normalised: the values in effect, never absent). */
export interface EchoedRequestFields {
  previous_response_id: string | null;
  instructions: string | null;
  tools: JsonObject[];
  tool_choice: string | JsonObject;
  truncation: string;
  parallel_tool_calls: boolean;
  text: JsonObject;
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  top_logprobs: number;
  temperature: number;
  reasoning: { effort: string | null; summary: string | null };
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  store: boolean;
  background: boolean;
  service_tier: string;
  metadata: JsonObject;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
  user: string | null;
}

export interface ResponseObject extends EchoedRequestFields {
  id: string;
  object: 'response';
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  incomplete_details: { reason: string } | null;
  model: string;
  output: OutputItem[];
  error: { code: string; message: string } | null;
  usage: ResponseUsage | null;
  /** The stored conversation this response belongs to (stateful requests). */
  conversation?: { id: string };
}

/** The nested error of an `error` event (Open Responses ErrorPayload; our spec's `{message, type, code}`). */
export interface StreamErrorPayload {
  type: string;
  code: string;
  message: string;
  param: string | null;
}

interface Sequenced {
  sequence_number: number;
}

export type ResponseLifecycleEventType = 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed';

export type ResponsesEvent = Sequenced &
  (
    | { type: ResponseLifecycleEventType; response: ResponseObject }
    | { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: OutputItem }
    | {
        type: 'response.content_part.added' | 'response.content_part.done';
        item_id: string;
        output_index: number;
        content_index: number;
        part: MessageContent;
      }
    | { type: 'response.output_text.delta'; item_id: string; output_index: number; content_index: number; delta: string; logprobs: JsonObject[] }
    | { type: 'response.output_text.done'; item_id: string; output_index: number; content_index: number; text: string; logprobs: JsonObject[] }
    | { type: 'response.refusal.delta'; item_id: string; output_index: number; content_index: number; delta: string }
    | { type: 'response.refusal.done'; item_id: string; output_index: number; content_index: number; refusal: string }
    | { type: 'response.function_call_arguments.delta'; item_id: string; output_index: number; delta: string }
    | { type: 'response.function_call_arguments.done'; item_id: string; output_index: number; name: string; arguments: string }
    | { type: 'response.svc_call_arguments.delta' | 'response.mcp_call_arguments.delta'; item_id: string; output_index: number; delta: string }
    | { type: 'response.svc_call_arguments.done' | 'response.mcp_call_arguments.done'; item_id: string; output_index: number; arguments: string }
    | {
        type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
        item_id: string;
        output_index: number;
        summary_index: number;
        part: SummaryTextContent;
      }
    | { type: 'response.reasoning_summary_text.delta'; item_id: string; output_index: number; summary_index: number; delta: string }
    | { type: 'response.reasoning_summary_text.done'; item_id: string; output_index: number; summary_index: number; text: string }
    /**
     * Both error shapes at once: OpenAI's API (and the SDKs reading it) put `code`, `message` and
     * `param` at the top level; our spec and the Open Responses ErrorStreamingEvent nest them in `error`.
     */
    | ({ type: 'error'; error: StreamErrorPayload } & Omit<StreamErrorPayload, 'type'>)
  );

export type ResponsesEventType = ResponsesEvent['type'];
