// The chat completions client format (POST /v1/chat/completions) ⇄ the canonical model, for providers
// that do not speak chat completions (a chat-speaking provider gets the caller's bytes).
export { chatRequestToCanonical } from './chat-request-to-canonical';
export { canonicalToChatCompletion } from './canonical-to-chat-completion';
export { ChatChunkStream, canonicalToChatChunks, type ChatChunkStreamOptions } from './canonical-to-chat-chunks';
export type { ChatCompletion, ChatCompletionChunk, ChatUsage } from './chat-wire-types';
