// POST /v1/completions: legacy completions, forwarded as the caller's bytes to OpenAI-format providers
// (pass-through, like chat). A model served by a provider without legacy completions is a clear 400.
import { redactCompletionRequest } from '../../formats/chat/redact-chat-messages';
import type { CompletionRequest } from '../../formats/completions/completion-request';
import { GatewayError } from '../../http/errors';
import type { Handler } from '../types';
import { orgOf } from './principal';
import { CHAT_STREAM_END, chatStreamError, relayJson, relaySse } from './relay';
import { passThroughBody, type BodyEdit } from './upstream-body';
import { UpstreamCall } from './upstream-call';

export const createCompletion: Handler = async (ctx, services) => {
  // Checked by the generated validator (OpenAPI CompletionRequest): model, prompt, stream, no svc.
  const request = ctx.body as CompletionRequest;
  const resolved = services.models.resolve(orgOf(ctx), request.model);
  const { provider, upstreamModel } = resolved;
  if (!provider.forward || !provider.forwards?.includes('completions')) {
    throw new GatewayError(
      'unsupported_operation',
      `The model '${request.model}' is served by a ${provider.type} provider, which has no legacy completions; use /v1/chat/completions.`,
      { param: 'model' },
    );
  }
  const redactor = ctx.dlp;
  const edit: BodyEdit | null = redactor ? (copy) => redactCompletionRequest(copy, redactor) : null;
  const stream = request.stream === true;
  const body = passThroughBody(ctx, request, request.model, upstreamModel, edit);
  const call = new UpstreamCall(ctx, services, resolved);
  let response;
  try {
    response = await provider.forward('completions', body, { signal: ctx.abort, requestId: ctx.requestId, stream });
  } catch (err) {
    call.fail(err);
    throw err;
  }
  return stream ? relaySse(ctx, response, call, chatStreamError, CHAT_STREAM_END) : relayJson(response, call);
};
