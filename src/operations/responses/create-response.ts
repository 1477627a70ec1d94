// POST /v1/responses (spec "POST /v1/responses", "Events"). Thin: the route's own rules, the opt-in
// curated prompt, then the model-call path: a native Responses upstream gets the inspected bytes (our
// own fields removed) and its reply is relayed; any other provider is called through the canonical
// model and the reply built by the Responses format. `store: true` persists the response and its event
// log (stored-response.ts). Every failure before the first byte is JSON in the nested envelope.
import { mintId, redactResponsesRequest, responsesRequestToCanonical } from '../../formats/responses';
import { droppedParamsHeader, forwardWireCall, prepareWireCall, type WireCodec } from '../../model-call/wire-call';
import type { Handler } from '../types';
import { invokeAgent, isAgentModel } from './agent-invocation';
import { DEFAULT_CURATED_PROMPT, withCuratedPrompt } from './curated-prompt';
import { originatingInputItems } from './input-items';
import { relayNativeJson, relayNativeStream } from './native-relay';
import { checkResponseRequest } from './request-rules';
import { storedResponse } from './stored-response';
import { translatedResponse } from './translated';

/** Rule 1: removed from the outgoing request (metadata is stored and echoed instead); `svc` is ours. */
const OWN_FIELDS = ['metadata', 'litellm_metadata', 'proxy_server_request', 'svc'] as const;

export const RESPONSES_CODEC: WireCodec = {
  format: 'responses',
  toCanonical: responsesRequestToCanonical,
  redact: redactResponsesRequest,
  ownFields: OWN_FIELDS,
};

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

export const createResponse: Handler = async (ctx, services) => {
  // The generated validator (OpenAPI CreateResponseRequest) has checked the shapes, naming the field.
  const original = ctx.body as Record<string, unknown>;
  // Rule 7: an agent invoked as a model starts a run instead of a model call.
  if (isAgentModel(original['model'])) return invokeAgent(ctx, services, original);
  checkResponseRequest(original);
  const body = withCuratedPrompt(original, services.config.responses.systemPrompt ?? DEFAULT_CURATED_PROMPT);
  const stream = body['stream'] === true;
  const store = body['store'] === true;
  const metadata = isRecord(body['metadata']) ? body['metadata'] : {};
  const call = prepareWireCall(ctx, services, RESPONSES_CODEC, body, { detached: store });
  const sink = store ? storedResponse(ctx, services, { model: body['model'] as string, inputItems: originatingInputItems(call.inspected['input']) }) : null;
  // Ours whatever the path: a stored response is keyed on it (a native upstream's own id is its own).
  const id = mintId('resp');

  if (call.kind === 'forward') {
    const response = await forwardWireCall(ctx, call, 'responses', stream);
    const target = { metadata, stored: sink ? { sink, id } : null };
    return stream ? relayNativeStream(ctx, response, call.meter, target) : relayNativeJson(response, call.meter, target);
  }
  return translatedResponse(ctx, services, call, {
    // The fields echoed in the response object are what the model was sent (redacted under a DLP
    // policy, as a native upstream echoes them): a stored response keeps nothing the policy removed.
    body: { ...call.inspected, metadata },
    stream,
    headers: droppedParamsHeader(call.plan.dropped),
    sink,
    id,
  });
};
