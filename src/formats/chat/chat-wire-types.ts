// The OpenAI chat completions wire format as the chat format writes it
// (https://platform.openai.com/docs/api-reference/chat/object and .../chat/streaming): the reply
// object and the stream chunk. Owned by the format, so that it never imports a provider's types.

/**
 * Google's extension of the OpenAI format (https://ai.google.dev/gemini-api/docs/openai#thinking): the
 * thought signature a Gemini model attached to a function call, which it wants back with the call.
 */
export interface ThoughtSignatureExtension {
  google: { thought_signature: string };
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  extra_content?: ThoughtSignatureExtension;
}

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

export interface ChatCompletionMessage {
  role: 'assistant';
  content: string | null;
  refusal: string | null;
  tool_calls?: ChatToolCall[];
  /** The model's readable reasoning (the de facto extension of DeepSeek, vLLM and LiteLLM). */
  reasoning_content?: string;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: number; message: ChatCompletionMessage; finish_reason: ChatFinishReason; logprobs: null }[];
  usage: ChatUsage;
}

export interface ChatChunkToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
  extra_content?: ThoughtSignatureExtension;
}

export interface ChatChunkDelta {
  role?: 'assistant';
  content?: string;
  /** The model's refusal, as OpenAI streams it. */
  refusal?: string;
  reasoning_content?: string;
  tool_calls?: ChatChunkToolCall[];
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: number; delta: ChatChunkDelta; finish_reason: ChatFinishReason | null }[];
  usage?: ChatUsage;
}
