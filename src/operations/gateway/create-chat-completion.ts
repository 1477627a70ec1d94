// POST /v1/chat/completions (spec: chat message table, field table, rules 1-5). Thin: the model-call
// path resolves the model and applies policy; a provider that speaks chat completions gets the
// inspected bytes (pass-through, the reply relayed), any other is called through the canonical model
// and its reply rendered as a chat completion or chunks.
import { canonicalToChatChunks, canonicalToChatCompletion } from '../../formats/chat';
import { droppedParamsHeader, forwardWireCall, prepareWireCall } from '../../model-call/wire-call';
import type { Handler } from '../types';
import { CHAT_STREAM_END, chatStreamError, relayJson, relaySse } from './relay';
import { CHAT_CHUNK_FORMAT, streamSse } from './stream-chunks';
import { CHAT_CODEC } from './wire-codecs';

export const createChatCompletion: Handler = async (ctx, services) => {
  // The generated validator (OpenAPI ChatCompletionRequest) has checked model, messages (≥ 1, roles,
  // content, tool_call_id on tool messages), stream and the refused svc block, naming the field.
  const body = ctx.body as Record<string, unknown>;
  const model = body['model'] as string;
  const stream = body['stream'] === true;
  const call = prepareWireCall(ctx, services, CHAT_CODEC, body);

  if (call.kind === 'forward') {
    const response = await forwardWireCall(ctx, call, 'chat', stream);
    return stream ? relaySse(ctx, response, call.meter, chatStreamError, CHAT_STREAM_END) : relayJson(response, call.meter);
  }

  const headers = droppedParamsHeader(call.plan.dropped);
  if (stream) {
    const streamOptions = body['stream_options'] as { include_usage?: unknown } | undefined;
    const parts = services.modelCalls.stream(call.scope, call.request, call.plan);
    const chunks = canonicalToChatChunks(parts, { model, includeUsage: streamOptions?.include_usage === true });
    return streamSse(ctx, chunks, CHAT_CHUNK_FORMAT, call.meter, headers);
  }
  const response = await services.modelCalls.generate(call.scope, call.request, call.plan);
  return { status: 200, ...(headers ? { headers } : {}), body: canonicalToChatCompletion(response, model) };
};
