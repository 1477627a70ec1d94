// POST /v1/completions (legacy): the spec shows no shape; the generated validator checks what the route
// needs (model, prompt, stream, no opt-in block) and everything else is forwarded as it came.
export interface CompletionRequest {
  model: string;
  prompt?: unknown;
  stream?: boolean;
  [extra: string]: unknown;
}
