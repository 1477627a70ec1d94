// The Anthropic Messages wire format as the /v1/messages client format writes it
// (https://docs.anthropic.com/en/api/messages and .../build-with-claude/streaming): the reply object,
// its content blocks, usage and the stream events. Owned by the format, so that it never imports a
// provider's types; blocks stay open-ended (the API grows, and native blocks pass as they came).

/** Every stop_reason the Messages API documents (https://docs.anthropic.com/en/api/handling-stop-reasons). */
export const MESSAGES_STOP_REASONS = ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded'] as const;

export type MessagesStopReason = (typeof MESSAGES_STOP_REASONS)[number];

export type MessagesContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  /** A native block (server_tool_use, web_search_tool_result...) exactly as the upstream produced it. */
  | { type: string; [field: string]: unknown };

export interface MessagesUsage {
  /** Input tokens that were neither read from nor written to the prompt cache. */
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export interface MessagesMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: MessagesContentBlock[];
  stop_reason: MessagesStopReason;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

/** One SSE event of a Messages stream: the `event:` name and the `data:` object. */
export interface MessageEvent {
  event: string;
  data: Record<string, unknown>;
}
