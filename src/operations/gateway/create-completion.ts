// POST /v1/completions (legacy): a provider with legacy completions gets the caller's inspected bytes
// (pass-through, like chat); any other is called through the canonical model, the prompt as a user
// turn, and its reply rendered as a text completion or its chunks.
import { canonicalToCompletion, canonicalToCompletionChunks } from '../../formats/completions';
import { droppedParamsHeader, forwardWireCall, prepareWireCall } from '../../model-call/wire-call';
import type { Handler } from '../types';
import { CHAT_STREAM_END, chatStreamError, relayJson, relaySse } from './relay';
import { CHAT_CHUNK_FORMAT, streamSse } from './stream-chunks';
import { COMPLETIONS_CODEC } from './wire-codecs';

export const createCompletion: Handler = async (ctx, services) => {
  // Checked by the generated validator (OpenAPI CompletionRequest): model, prompt, stream, no svc.
  const body = ctx.body as Record<string, unknown>;
  const model = body['model'] as string;
  const stream = body['stream'] === true;
  const call = prepareWireCall(ctx, services, COMPLETIONS_CODEC, body);

  if (call.kind === 'forward') {
    const response = await forwardWireCall(ctx, call, 'completions', stream);
    return stream ? relaySse(ctx, response, call.meter, chatStreamError, CHAT_STREAM_END) : relayJson(response, call.meter);
  }

  const headers = droppedParamsHeader(call.plan.dropped);
  if (stream) {
    const streamOptions = body['stream_options'] as { include_usage?: unknown } | undefined;
    const parts = services.modelCalls.stream(call.scope, call.request, call.plan);
    const chunks = canonicalToCompletionChunks(parts, { model, includeUsage: streamOptions?.include_usage === true });
    return streamSse(ctx, chunks, CHAT_CHUNK_FORMAT, call.meter, headers);
  }
  const response = await services.modelCalls.generate(call.scope, call.request, call.plan);
  return { status: 200, ...(headers ? { headers } : {}), body: canonicalToCompletion(response, model) };
};
