// POST /v1/messages: the Anthropic Messages format in and out, for every provider. A provider that
// speaks Messages natively gets the caller's inspected bytes (pass-through); every other is called
// through the canonical model (formats/anthropic-messages converts the request, the reply and the
// stream into Anthropic's event sequence). Errors use Anthropic's envelope (the operation's
// x-error-envelope), mid-stream failures Anthropic's `error` event.
import { canonicalToMessage, canonicalToMessageEvents, type MessageEvent } from '../../formats/anthropic-messages';
import { anthropicErrorType } from '../../http/envelope';
import { droppedParamsHeader, forwardWireCall, prepareWireCall } from '../../model-call/wire-call';
import type { Handler } from '../types';
import { relayJson, relaySse, type StreamErrorWriter } from './relay';
import { streamSse, type StreamFormat } from './stream-chunks';
import { MESSAGES_CODEC } from './wire-codecs';

/** The event that ends a messages stream (https://docs.anthropic.com/en/docs/build-with-claude/streaming). */
const MESSAGES_STREAM_END = Buffer.from('message_stop');

/** Anthropic's mid-stream error event (their streaming docs: `event: error`). */
export const anthropicStreamError: StreamErrorWriter = (sse, err) => {
  sse.fail(JSON.stringify({ type: 'error', error: { type: anthropicErrorType(err.status), message: err.message } }), 'error');
};

const MESSAGE_EVENT_FORMAT: StreamFormat<MessageEvent> = {
  frame: (item) => ({ event: item.event, data: JSON.stringify(item.data) }),
  writeError: anthropicStreamError,
  done: false,
};

export const createMessage: Handler = async (ctx, services) => {
  // Checked by the generated validator (OpenAPI MessagesRequest): model, max_tokens, messages ≥ 1, no svc.
  const body = ctx.body as Record<string, unknown>;
  const model = body['model'] as string;
  const stream = body['stream'] === true;
  const call = prepareWireCall(ctx, services, MESSAGES_CODEC, body);

  if (call.kind === 'forward') {
    const response = await forwardWireCall(ctx, call, 'messages', stream);
    return stream ? relaySse(ctx, response, call.meter, anthropicStreamError, MESSAGES_STREAM_END) : relayJson(response, call.meter);
  }

  const headers = droppedParamsHeader(call.plan.dropped);
  if (stream) {
    const parts = services.modelCalls.stream(call.scope, call.request, call.plan);
    return streamSse(ctx, canonicalToMessageEvents(parts, model), MESSAGE_EVENT_FORMAT, call.meter, headers);
  }
  const response = await services.modelCalls.generate(call.scope, call.request, call.plan);
  return { status: 200, ...(headers ? { headers } : {}), body: canonicalToMessage(response, model) };
};
