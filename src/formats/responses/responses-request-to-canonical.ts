// A POST /v1/responses body → the canonical ModelRequest (spec "POST /v1/responses", field table and
// rule 1). `instructions` become the leading system message, `input` the messages after it
// (request-input.ts), `tools` and `tool_choice` the canonical tools (request-tools.ts), the
// generation fields the options (request-options.ts). Fields with no canonical meaning (`include`,
// `truncation`, `background`, `prompt`, `max_tool_calls`, anything unlisted) go to `extra`, which a
// provider speaking Responses sends and any other reports as dropped. The handler's own fields
// (model routing, storage, streaming, `metadata`, `svc`) are neither mapped nor extra.
import type { JsonObject, Message, ModelRequest } from '../../canonical/model';
import { inputToMessages } from './request-input';
import type { CanonicalRequest } from '../shared/canonical-request';
import { OPTION_FIELDS, optionsOf } from './request-options';
import { optionalString, unreadable } from './request-errors';
import { toolChoiceToCanonical, toolsToCanonical } from './request-tools';

/** Fields the handler owns (spec rule 1: metadata and the proxy fields never go upstream). */
export const HANDLER_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'stream',
  'stream_options',
  'store',
  'conversation',
  'previous_response_id',
  'metadata',
  'litellm_metadata',
  'proxy_server_request',
  'svc',
]);

/** Fields converted into the canonical request's messages and tools. */
const CONTENT_FIELDS: ReadonlySet<string> = new Set(['input', 'instructions', 'tools', 'tool_choice']);

/**
 * Converts a Responses body (its own fields are read, never changed). Throws a 400 GatewayError
 * naming the field (`param`, e.g. `input[2].content[0].image_url`) for a shape it cannot read.
 */
export function responsesRequestToCanonical(body: JsonObject): CanonicalRequest {
  const messages: Message[] = [];
  const instructions = optionalString(body, 'instructions', '');
  if (instructions !== undefined && instructions !== '') messages.push({ role: 'system', content: [{ type: 'text', text: instructions }] });
  messages.push(...inputToMessages(body['input']));

  const { options, fieldNames, unmapped } = optionsOf(body);
  const model = body['model'];
  if (typeof model !== 'string') throw unreadable('model', 'must be a string (a model id).');
  const request: ModelRequest = { model, messages, tools: toolsToCanonical(body['tools']), options };
  const toolChoice = toolChoiceToCanonical(body['tool_choice']);
  if (toolChoice !== undefined) request.toolChoice = toolChoice;

  const extra: JsonObject = { ...unmapped };
  for (const key of Object.keys(body)) {
    if (HANDLER_FIELDS.has(key) || CONTENT_FIELDS.has(key) || OPTION_FIELDS.has(key) || body[key] === undefined) continue;
    extra[key] = body[key];
  }
  if (Object.keys(extra).length > 0) request.extra = { format: 'responses', fields: extra };
  return { request, fieldNames };
}
