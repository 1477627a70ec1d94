// The Anthropic Messages API wire format (https://docs.anthropic.com/en/api/messages and
// .../messages-streaming), as far as the gateway reads or writes it. Shared by the three hostings
// (Anthropic, Bedrock, Vertex: same body, different envelope) and by the /v1/messages client format.
// Unknown fields are tolerated on both sides: the API grows, and we pass through what we don't know.

export type AnthropicRole = 'user' | 'assistant';

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  [extra: string]: unknown;
}

export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export interface AnthropicImageBlock {
  type: 'image';
  source: AnthropicImageSource;
  [extra: string]: unknown;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  [extra: string]: unknown;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | AnthropicContentBlock[];
  is_error?: boolean;
  [extra: string]: unknown;
}

export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature?: string;
  [extra: string]: unknown;
}

/** Any other block type (documents, redacted thinking, server tools...): carried as it is. */
export interface AnthropicOtherBlock {
  type: string;
  [extra: string]: unknown;
}

export type AnthropicContentBlock =
  AnthropicTextBlock | AnthropicImageBlock | AnthropicToolUseBlock | AnthropicToolResultBlock | AnthropicThinkingBlock | AnthropicOtherBlock;

export interface AnthropicMessageParam {
  role: AnthropicRole;
  content: string | AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  [extra: string]: unknown;
}

export type AnthropicToolChoice =
  { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean } | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

/** The request body, without `model`/`anthropic_version` (each hosting places those itself). */
export interface AnthropicMessagesBody {
  model?: string;
  messages: AnthropicMessageParam[];
  max_tokens: number;
  system?: string | AnthropicTextBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id?: string };
  stream?: boolean;
  thinking?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  [extra: string]: unknown;
}

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | string;

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
  [extra: string]: unknown;
}

export type AnthropicContentDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: string; [extra: string]: unknown };

export interface AnthropicErrorBody {
  type: string;
  message: string;
}

/** The events of a streamed reply; `ping` and unknown event types are ignored by readers. */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: AnthropicContentBlock }
  | { type: 'content_block_delta'; index: number; delta: AnthropicContentDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      /** `stop_details`: why a `refusal` refused ({type: 'refusal', category, explanation}). */
      delta: { stop_reason?: AnthropicStopReason | null; stop_sequence?: string | null; stop_details?: unknown };
      usage?: AnthropicUsage;
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: AnthropicErrorBody };
