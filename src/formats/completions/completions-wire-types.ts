// The OpenAI legacy completions wire format as the completions format writes it
// (https://platform.openai.com/docs/api-reference/completions/object): the reply object and its stream
// chunks, which have the same shape. Owned by the format, so that it never imports a provider's types.
import type { ChatUsage } from '../chat/chat-wire-types';

export type CompletionFinishReason = 'stop' | 'length' | 'content_filter';

export interface TextCompletionChoice {
  text: string;
  index: number;
  logprobs: null;
  finish_reason: CompletionFinishReason | null;
}

/** A reply, or one chunk of a streamed reply (the same object, `finish_reason` null until the last). */
export interface TextCompletion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: TextCompletionChoice[];
  /** The same usage object as chat completions'. */
  usage?: ChatUsage;
}
