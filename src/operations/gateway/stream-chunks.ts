// Writes a stream produced in-process (a format's rendering of canonical stream parts) as SSE: one
// event per item as it arrives, the format's terminator at the end, an error event if the source fails
// mid-stream. The first item is awaited before any byte is sent, so a failure before the stream starts
// is a normal HTTP error (spec, Events rule 2), and headers (x-gateway-dropped-params) can still be set.
import type { RequestContext } from '../../pipeline/context';
import { toGatewayError } from '../../http/errors';
import { SseWriter } from '../../http/sse';
import type { ModelCallMeter } from '../../model-call/meter';
import { chatStreamError, type StreamErrorWriter } from './relay';

export interface SseFrame {
  data: string;
  event?: string;
  id?: number | string;
}

export interface StreamFormat<T> {
  frame(item: T): SseFrame;
  writeError: StreamErrorWriter;
  /** Writes `data: [DONE]` after the last item (chat and legacy completions). */
  done: boolean;
}

export async function streamSse<T>(
  ctx: RequestContext,
  source: AsyncIterable<T>,
  format: StreamFormat<T>,
  meter: ModelCallMeter,
  headers?: Record<string, string>,
): Promise<undefined> {
  const iterator = source[Symbol.asyncIterator]();
  let first: IteratorResult<T>;
  try {
    first = await iterator.next();
  } catch (err) {
    meter.fail(err);
    throw err;
  }
  const sse = new SseWriter(ctx.res, headers ? { headers } : {});
  try {
    for (let item = first; !item.done; item = await iterator.next()) {
      const { data, event, id } = format.frame(item.value);
      const pending = sse.event(data, event, id);
      if (pending) await pending;
      if (!sse.open) break;
    }
    if (sse.open) {
      if (format.done) await sse.done();
      meter.finish('ok');
    } else {
      meter.finish('aborted');
    }
  } catch (err) {
    meter.fail(err);
    if (!ctx.abort.aborted) format.writeError(sse, toGatewayError(err));
  } finally {
    // Leaving early (client gone) closes the source, which releases the upstream connection.
    await iterator.return?.().catch(() => undefined);
    sse.end();
  }
  return undefined;
}

/** Chat completion chunks and legacy completion chunks: one JSON `data:` line each, `[DONE]` last. */
export const CHAT_CHUNK_FORMAT: StreamFormat<unknown> = {
  frame: (chunk) => ({ data: JSON.stringify(chunk) }),
  writeError: chatStreamError,
  done: true,
};
