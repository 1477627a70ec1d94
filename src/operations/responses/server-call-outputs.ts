// Server-side tool calls (`mcp_call`, `svc_call`) a client sends back without their result. The
// OpenAI Agents SDK (`@openai/agents` 0.20, openaiResponsesConverter.js) replays an `mcp_call` from
// its history with the output left out, trusting the server to know its own item by id; the model
// would then never see the result of a call the gateway ran (the format leaves out a call without a
// result). The gateway keeps the server calls of its recent responses in the output item cache and
// fills such a call's output and error in from there; a call it does not know is left as sent.
import type { OutputItemCache } from '../../responses/output-item-cache';

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

const SERVER_CALLS: ReadonlySet<unknown> = new Set(['mcp_call', 'svc_call']);

const hasResult = (item: Json): boolean => typeof item['output'] === 'string' || typeof item['error'] === 'string';

/** The server calls among a response's output items (what the cache keeps of a stored response). */
export function serverCallsOf(output: unknown): Json[] {
  return Array.isArray(output) ? output.filter((item): item is Json => isRecord(item) && SERVER_CALLS.has(item['type'])) : [];
}

/** The body with each result-less server call of `input` completed from the organization's recent responses. */
export function withServerCallOutputs(body: Json, orgId: string, cache: OutputItemCache): Json {
  const input = body['input'];
  if (!Array.isArray(input)) return body;
  let changed = false;
  const completed = input.map((item: unknown) => {
    if (!isRecord(item) || !SERVER_CALLS.has(item['type']) || hasResult(item) || typeof item['id'] !== 'string') return item;
    const known = cache.resolve(orgId, item['id']);
    if (!known || known['type'] !== item['type'] || !hasResult(known)) return item;
    changed = true;
    return { ...item, output: known['output'] ?? null, error: known['error'] ?? null };
  });
  return changed ? { ...body, input: completed } : body;
}
