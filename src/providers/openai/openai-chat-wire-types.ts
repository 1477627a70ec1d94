// The OpenAI chat-completions wire shapes this provider writes and reads on the canonical path
// (POST /chat/completions, its JSON reply and its `chat.completion.chunk` stream events), as OpenAI,
// Azure OpenAI, vLLM and Ollama speak them. Only the fields the translation uses are typed; the
// OpenAI-compatible servers' reasoning fields (`reasoning_content`, `reasoning`) are included.
import type { JsonObject } from '../../canonical/model';

export type OpenAiChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'file'; file: { file_data?: string; file_id?: string; filename?: string } }
  /** A caller's part of the chat format the canonical model does not describe, sent as it came. */
  | JsonObject;

export interface OpenAiChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type OpenAiChatMessage =
  | { role: 'system' | 'developer'; content: string | OpenAiChatContentPart[] }
  | { role: 'user'; content: string | OpenAiChatContentPart[]; name?: string }
  | { role: 'assistant'; content: string | OpenAiChatContentPart[] | null; tool_calls?: OpenAiChatToolCall[]; name?: string }
  | { role: 'tool'; content: string | OpenAiChatContentPart[]; tool_call_id: string };

export type OpenAiChatToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { type: 'function'; function: { name: string } }
  | { type: 'allowed_tools'; allowed_tools: { mode: 'auto' | 'required'; tools: { type: 'function'; function: { name: string } }[] } };

export interface OpenAiChatRequest {
  model: string;
  messages: OpenAiChatMessage[];
  tools?: JsonObject[];
  tool_choice?: OpenAiChatToolChoice;
  stream?: boolean;
  stream_options?: JsonObject;
  [field: string]: unknown;
}

export interface OpenAiChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

export interface OpenAiChatReplyToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface OpenAiChatReplyMessage {
  role?: string;
  content?: string | { type?: string; text?: string }[] | null;
  refusal?: string | null;
  tool_calls?: OpenAiChatReplyToolCall[] | null;
  /** DeepSeek and vLLM (before 0.10) put the model's reasoning here. */
  reasoning_content?: string | null;
  /** vLLM (0.10 on), Ollama and OpenRouter put it here. */
  reasoning?: unknown;
}

export interface OpenAiChatCompletion {
  id?: string;
  model?: string;
  created?: number;
  choices?: { index?: number; message?: OpenAiChatReplyMessage; finish_reason?: string | null }[];
  usage?: OpenAiChatUsage | null;
  /** Some OpenAI-compatible servers answer a failure with HTTP 200 and an error object. */
  error?: { message?: unknown } | string | null;
}

export interface OpenAiChatChunkToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface OpenAiChatChunk {
  id?: string;
  model?: string;
  created?: number;
  choices?: {
    index?: number;
    delta?: {
      role?: string;
      content?: string | null;
      refusal?: string | null;
      reasoning_content?: string | null;
      reasoning?: unknown;
      tool_calls?: OpenAiChatChunkToolCall[] | null;
    } | null;
    finish_reason?: string | null;
  }[];
  usage?: OpenAiChatUsage | null;
  error?: { message?: unknown } | string | null;
}
