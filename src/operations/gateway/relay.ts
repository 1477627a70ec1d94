// Relays an upstream reply in the provider's own wire format to the client without parsing or
// re-serialising it: a JSON reply as one buffer (its usage peeked from the bytes), a stream event by
// event as it arrives (usage peeked from the tail). A failure after the first streamed byte ends the
// stream with an error event in the client format instead of a hang or a silent truncation.
import type { RequestContext } from '../../pipeline/context';
import { STOP_READING, type ChunkVerdict } from '../../providers/http/reply-body';
import type { UpstreamResponse } from '../../providers/http/transport';
import { peekUsage, UsageTail } from '../../formats/chat/peek-usage';
import { toGatewayError, type GatewayError } from '../../http/errors';
import { SseWriter } from '../../http/sse';
import type { Reply } from '../types';
import { EventAligner } from './event-aligner';
import type { UpstreamCall } from './upstream-call';

/**
 * A JSON reply relayed as the upstream's bytes. Its content type is ours, not copied from the upstream:
 * no header value of theirs reaches our response (a control byte in one made setHeader throw).
 */
export async function relayJson(response: UpstreamResponse, call: UpstreamCall): Promise<Reply> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      parts.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    call.fail(err);
    throw err;
  }
  const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
  const usage = peekUsage(bytes);
  call.usage(usage?.promptTokens ?? 0, usage?.completionTokens ?? 0);
  call.finish('ok');
  // An explicit length spares chunked framing on the client side of the hop.
  return { status: 200, headers: { 'content-length': String(bytes.length) }, raw: { contentType: 'application/json', data: bytes } };
}

/** How a stream failure is written in the client's format (chat: `data: {"error":...}`). */
export type StreamErrorWriter = (sse: SseWriter, err: GatewayError) => void;

export const chatStreamError: StreamErrorWriter = (sse, err) => {
  sse.fail(JSON.stringify({ error: { message: err.message, type: err.type, code: err.wireCode ?? 'stream_error', param: null } }));
};

/** An SSE reply relayed event by event as the upstream's bytes. */
export async function relaySse(ctx: RequestContext, response: UpstreamResponse, call: UpstreamCall, writeError: StreamErrorWriter): Promise<undefined> {
  const sse = new SseWriter(ctx.res);
  const aligner = new EventAligner();
  const tail = new UsageTail();
  let failed = false;
  let failure: unknown;
  try {
    // Each chunk is written inside the upstream's 'data' event (no promise or iterator step per chunk):
    // relaying thousands of chunks a second, that step was most of the relay's own cost.
    await response.body.forEach((chunk): ChunkVerdict => {
      tail.push(chunk);
      const ready = aligner.push(chunk);
      const pending = ready.length > 0 ? sse.write(ready) : undefined;
      // Client gone: stopping releases the upstream connection.
      return sse.open ? pending : STOP_READING;
    });
    const rest = aligner.rest();
    if (rest && sse.open) await sse.write(rest);
  } catch (err) {
    failed = true;
    failure = err;
    if (!ctx.abort.aborted) writeError(sse, toGatewayError(err));
  }
  // The client gets its last byte first; the call's bookkeeping (metrics, usage for the audit plugin,
  // which reads it when the response closes, a tick later at the earliest) follows.
  const clientLeft = ctx.abort.aborted || !sse.open;
  sse.end();
  if (failed) call.fail(failure);
  else call.finish(clientLeft ? 'aborted' : 'ok');
  const usage = tail.usage();
  call.usage(usage?.promptTokens ?? 0, usage?.completionTokens ?? 0);
  return undefined;
}
