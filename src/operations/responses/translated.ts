// A Responses request served through the canonical model (every provider without a native Responses
// upstream): the model call streams canonical parts, ResponsesEventStream (src/formats/responses) turns
// them into the spec's event sequence, and the caller gets those events as SSE or, unstreamed, the
// final response object. A stored response is generated as a stream whatever the caller asked, so its
// event log exists for replay, and it is generated to its end even when the caller leaves.
import type { JsonObject, ModelRequest, StreamPart } from '../../canonical/model';
import { canonicalToResponseObject, ResponsesEventStream, type ResponsesEvent } from '../../formats/responses';
import { GatewayError, toGatewayError } from '../../http/errors';
import { SseWriter } from '../../http/sse';
import type { CallScope } from '../../model-call/model-calls';
import type { WireCall } from '../../model-call/wire-call';
import type { ToolLoopScope, ToolPlan } from '../../tools/loop';
import type { RequestContext } from '../../pipeline/context';
import type { AppServices } from '../../services';
import type { Reply } from '../types';
import type { ResponseEventPayload, ResponseSink } from './response-sink';

export interface TranslatedOptions {
  /** The caller's body (its fields are echoed in the response object). */
  body: JsonObject;
  stream: boolean;
  headers: Record<string, string> | undefined;
  sink: ResponseSink | null;
  /** The response id (minted by the route, so a stored response's id is known before it starts). */
  id: string;
  /** A stored turn's conversation (echoed as `conversation: {id}`). */
  conversationId?: string;
  /** Given the final response object of a successful response (the output item cache). */
  onFinal?: (final: JsonObject) => void;
  /** The request has tools the gateway runs: the call goes through the tool loop, in this scope. */
  toolLoop?: Omit<ToolLoopScope, 'signal'>;
}

/** A model turn after the first (the tool loop's): planned and metered as a call of its own. */
async function* meteredTurn(services: Pick<AppServices, 'modelCalls'>, scope: CallScope, request: ModelRequest): AsyncGenerator<StreamPart> {
  const plan = services.modelCalls.plan(scope, request);
  try {
    yield* services.modelCalls.stream(scope, request, plan);
    plan.meter.finish('ok');
  } catch (err) {
    plan.meter.fail(err);
    throw err;
  }
}

/** The call's parts: the model's stream, or the tool loop's over its turns (the first metered by the call's plan). */
async function sourceOf(
  services: Pick<AppServices, 'modelCalls' | 'tools'>,
  call: Extract<WireCall, { kind: 'canonical' }>,
  loopScope: Omit<ToolLoopScope, 'signal'> | undefined,
): Promise<{ parts: AsyncIterable<StreamPart>; serverTools?: ToolPlan['serverTools'] }> {
  if (!loopScope) return { parts: services.modelCalls.stream(call.scope, call.request, call.plan) };
  const scope: ToolLoopScope = { ...loopScope, signal: call.scope.signal };
  const plan = await services.tools.loop.prepare(call.request, scope);
  const turn = (request: ModelRequest, round: number): AsyncIterable<StreamPart> =>
    round === 0 ? services.modelCalls.stream(call.scope, request, call.plan) : meteredTurn(services, call.scope, request);
  return { parts: services.tools.loop.run(plan, turn, scope), serverTools: (name, callId) => plan.serverTools(name, callId) };
}

export async function translatedResponse(
  ctx: RequestContext,
  services: Pick<AppServices, 'modelCalls' | 'tools'>,
  call: Extract<WireCall, { kind: 'canonical' }>,
  options: TranslatedOptions,
): Promise<Reply | undefined> {
  const { body, stream, headers, sink, id, conversationId, onFinal } = options;
  const model = body['model'] as string;
  const context = { request: body, id, model, ...(conversationId !== undefined ? { conversationId } : {}) };
  if (!stream && !sink && !options.toolLoop) {
    const response = await services.modelCalls.generate(call.scope, call.request, call.plan);
    const object = canonicalToResponseObject(response, context);
    onFinal?.(object as unknown as JsonObject);
    return { status: 200, ...(headers ? { headers } : {}), body: object };
  }

  let iterator: AsyncIterator<StreamPart>;
  let item: IteratorResult<StreamPart>;
  let serverTools: ToolPlan['serverTools'] | undefined;
  try {
    const source = await sourceOf(services, call, options.toolLoop);
    serverTools = source.serverTools;
    iterator = source.parts[Symbol.asyncIterator]();
    // The upstream is asked on the first next(): a failure before any part is a normal JSON error.
    item = await iterator.next();
  } catch (err) {
    call.meter.fail(err);
    throw err;
  }
  // Every part of the call is pushed up to its finish: an item the response ended incomplete in says so.
  const events = new ResponsesEventStream({ ...context, marksCutItems: true, ...(serverTools ? { serverTools } : {}) });
  if (sink) {
    try {
      await sink.begin(events.response() as unknown as JsonObject);
    } catch (err) {
      // Not stored, nothing sent: a JSON error, and the upstream stream is not left open.
      await iterator.return?.(undefined).catch(() => undefined);
      call.meter.fail(err);
      throw err;
    }
  }
  const sse = stream ? new SseWriter(ctx.res, headers ? { headers } : {}) : null;
  const emit = async (batch: ResponsesEvent[]): Promise<void> => {
    for (const event of batch) {
      // Serialized once: the caller's frame and the stored event are the same text.
      const text = sink || sse?.open ? JSON.stringify(event) : '';
      sink?.event(event as unknown as ResponseEventPayload, text);
      if (sse?.open) {
        const pending = sse.event(text, event.type, event.sequence_number);
        if (pending) await pending;
      }
    }
  };
  let failure: GatewayError | null = null;
  try {
    await emit(events.start());
    for (; !item.done; item = await iterator.next()) {
      await emit(events.push(item.value));
      // A caller that left stops a stateless stream (releasing the upstream); a stored one goes on.
      if (sse && !sse.open && !sink) break;
    }
    if (!sse || sse.open || sink) await emit(events.finish());
  } catch (err) {
    failure = toGatewayError(err);
    await emit(events.fail(err)).catch(() => undefined);
  } finally {
    await iterator.return?.(undefined).catch(() => undefined);
  }
  const final = events.response();
  if (!failure) onFinal?.(final as unknown as JsonObject);
  const clientLeft = sse !== null && (ctx.abort.aborted || !sse.open);
  if (failure) call.meter.fail(failure);
  else call.meter.finish(clientLeft ? 'aborted' : 'ok');
  try {
    // Final in the store before the caller's stream ends (see native-relay.ts).
    if (sink) await sink.end(final as unknown as JsonObject);
  } finally {
    sse?.end();
  }
  if (sse) return undefined;
  // Unstreamed: a failure is the caller's error (the stored response says failed).
  if (failure) throw failure;
  return { status: 200, ...(headers ? { headers } : {}), body: final };
}
