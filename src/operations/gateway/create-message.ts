// POST /v1/messages: the Anthropic Messages format in and out, for every provider. A provider that
// speaks Messages natively (forwards 'messages') gets the caller's bytes (pass-through); every other
// provider is reached through the canonical chat format (formats/anthropic-messages translates the
// request, the reply and the stream into Anthropic's event sequence). Errors use Anthropic's envelope
// (the operation's x-error-envelope), mid-stream failures Anthropic's `error` event.
import { chatChunksToMessageEvents, chatCompletionToMessage, messagesRequestToChat, type MessageEvent } from '../../formats/anthropic-messages';
import { redactMessagesRequest } from '../../formats/anthropic-messages/redact-messages-request';
import type { RequestContext } from '../../pipeline/context';
import type { Handler } from '../types';
import { orgOf } from './principal';
import { relayJson, relaySse, type StreamErrorWriter } from './relay';
import { meterChunks, streamSse, type StreamFormat } from './stream-chunks';
import { passThroughBody, transformedCopy, type BodyEdit } from './upstream-body';
import { UpstreamCall } from './upstream-call';

/** The event that ends a messages stream (https://docs.anthropic.com/en/docs/build-with-claude/streaming). */
const MESSAGES_STREAM_END = Buffer.from('message_stop');

/** Anthropic's mid-stream error event (their streaming docs: `event: error`). */
export const anthropicStreamError: StreamErrorWriter = (sse, err) => {
  const type = err.status === 429 ? 'rate_limit_error' : err.status === 529 || err.status === 503 ? 'overloaded_error' : 'api_error';
  sse.fail(JSON.stringify({ type: 'error', error: { type, message: err.message } }), 'error');
};

const MESSAGE_EVENT_FORMAT: StreamFormat<MessageEvent> = {
  frame: (item) => ({ event: item.event, data: JSON.stringify(item.data) }),
  writeError: anthropicStreamError,
  done: false,
};

/** DLP on every text of a Messages body, when the organization has a policy (null otherwise). */
function messagesDlpEdit(ctx: RequestContext): BodyEdit | null {
  const redactor = ctx.dlp;
  return redactor ? (copy) => redactMessagesRequest(copy, redactor) : null;
}

export const createMessage: Handler = async (ctx, services) => {
  // Checked by the generated validator (OpenAPI MessagesRequest): model, max_tokens, messages ≥ 1, no svc.
  const body = ctx.body as Record<string, unknown>;
  const model = body['model'] as string;
  const resolved = services.models.resolve(orgOf(ctx), model);
  const { provider, upstreamModel } = resolved;
  const stream = body['stream'] === true;
  const call = new UpstreamCall(ctx, services, resolved);

  if (provider.forward && provider.forwards?.includes('messages')) {
    const bytes = passThroughBody(ctx, body, model, upstreamModel, messagesDlpEdit(ctx));
    let response;
    try {
      response = await provider.forward('messages', bytes, { signal: ctx.abort, requestId: ctx.requestId, stream });
    } catch (err) {
      call.fail(err);
      throw err;
    }
    return stream ? relaySse(ctx, response, call, anthropicStreamError, MESSAGES_STREAM_END) : relayJson(response, call);
  }

  const options = { signal: ctx.abort.signal, requestId: ctx.requestId };
  // Redacted before translation: the provider gets the translation of what was inspected.
  const { copy } = transformedCopy(ctx, body, messagesDlpEdit(ctx));
  const canonical = messagesRequestToChat(copy);
  delete canonical['stream'];
  if (stream) {
    const chunks = meterChunks(provider.chatStream(canonical, upstreamModel, options), call);
    return streamSse(ctx, chatChunksToMessageEvents(chunks, model), MESSAGE_EVENT_FORMAT, call);
  }
  try {
    const completion = await provider.chat(canonical, upstreamModel, options);
    call.usage(completion.usage?.prompt_tokens ?? 0, completion.usage?.completion_tokens ?? 0);
    call.finish('ok');
    return { status: 200, body: chatCompletionToMessage(completion, model) };
  } catch (err) {
    call.fail(err);
    throw err;
  }
};
