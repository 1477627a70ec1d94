// The legacy completions client format (POST /v1/completions) ⇄ the canonical model, for providers
// without legacy completions (a provider that has them gets the caller's bytes).
export { completionRequestToCanonical } from './completion-request-to-canonical';
export { canonicalToCompletion } from './canonical-to-completion';
export { CompletionChunkStream, canonicalToCompletionChunks, type CompletionChunkStreamOptions } from './canonical-to-completion-chunks';
export type { TextCompletion } from './completions-wire-types';
export type { CompletionRequest } from './completion-request';
