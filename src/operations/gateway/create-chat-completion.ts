// POST /v1/chat/completions (spec: chat message table, field table, rules 1-5). Thin: validate the
// rules the route owns, resolve the model for the caller's organization, then either forward the
// caller's bytes (OpenAI-format providers: pass-through) or call the provider through the canonical
// chat format (translated providers, demo), as JSON or as SSE.
import { redactChatRequest } from '../../formats/chat/redact-chat-messages';
import type { RequestContext } from '../../pipeline/context';
import type { ChatCompletionRequest } from '../../providers/types';
import type { Handler } from '../types';
import { orgOf } from './principal';
import { CHAT_STREAM_END, chatStreamError, relayJson, relaySse } from './relay';
import { streamChatChunks } from './stream-chunks';
import { passThroughBody, transformedCopy, type BodyEdit } from './upstream-body';
import { UpstreamCall } from './upstream-call';

/** DLP on every text of the body, when the organization has a policy (null otherwise: nothing to edit). */
function dlpEdit(ctx: RequestContext): BodyEdit | null {
  const redactor = ctx.dlp;
  return redactor ? (copy) => redactChatRequest(copy, redactor) : null;
}

/** The canonical request for chat()/chatStream(): transforms and DLP applied, `stream` consumed. */
export function canonicalChatRequest(ctx: RequestContext, request: ChatCompletionRequest): ChatCompletionRequest {
  const { copy } = transformedCopy(ctx, request, dlpEdit(ctx));
  delete copy['stream'];
  return copy as ChatCompletionRequest;
}

export const createChatCompletion: Handler = async (ctx, services) => {
  // The generated validator (OpenAPI ChatCompletionRequest) has checked model, messages (≥ 1, roles,
  // content, tool_call_id on tool messages), stream and the refused svc block, naming the field.
  const request = ctx.body as ChatCompletionRequest;
  const resolved = services.models.resolve(orgOf(ctx), request.model);
  const stream = request.stream === true;
  const { provider, upstreamModel } = resolved;
  const call = new UpstreamCall(ctx, services, resolved);

  if (provider.forward && provider.forwards?.includes('chat')) {
    const body = passThroughBody(ctx, request, request.model, upstreamModel, dlpEdit(ctx));
    let response;
    try {
      response = await provider.forward('chat', body, { signal: ctx.abort, requestId: ctx.requestId, stream });
    } catch (err) {
      call.fail(err);
      throw err;
    }
    return stream ? relaySse(ctx, response, call, chatStreamError, CHAT_STREAM_END) : relayJson(response, call);
  }

  const options = { signal: ctx.abort.signal, requestId: ctx.requestId };
  const canonical = canonicalChatRequest(ctx, request);
  if (stream) return streamChatChunks(ctx, provider.chatStream(canonical, upstreamModel, options), call);
  try {
    const completion = await provider.chat(canonical, upstreamModel, options);
    call.usage(completion.usage?.prompt_tokens ?? 0, completion.usage?.completion_tokens ?? 0);
    call.finish('ok');
    return { status: 200, body: completion };
  } catch (err) {
    call.fail(err);
    throw err;
  }
};
