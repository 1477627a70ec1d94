// Writes a stream produced in-process (a provider's chatStream() for translated providers and demo,
// or its translation to Anthropic events) as SSE: one event per item as it arrives, the format's
// terminator at the end, an error event if the source fails mid-stream. The first item is awaited
// before any byte is sent, so a failure before the stream starts is a normal HTTP error (spec,
// Events rule 2).
import type { RequestContext } from '../../pipeline/context';
import type { ChatCompletionChunk } from '../../providers/types';
import { toGatewayError } from '../../http/errors';
import { SseWriter } from '../../http/sse';
import { chatStreamError, type StreamErrorWriter } from './relay';
import type { UpstreamCall } from './upstream-call';

export interface SseFrame {
  data: string;
  event?: string;
}

export interface StreamFormat<T> {
  frame(item: T): SseFrame;
  writeError: StreamErrorWriter;
  /** Writes `data: [DONE]` after the last item (chat completions). */
  done: boolean;
}

/** Taps chat chunks for usage (the last chunk that carries it) as they pass. */
export async function* meterChunks(chunks: AsyncIterable<ChatCompletionChunk>, call: UpstreamCall): AsyncIterable<ChatCompletionChunk> {
  let prompt = 0;
  let completion = 0;
  try {
    for await (const chunk of chunks) {
      if (chunk.usage) {
        prompt = chunk.usage.prompt_tokens;
        completion = chunk.usage.completion_tokens;
      }
      yield chunk;
    }
  } finally {
    call.usage(prompt, completion);
  }
}

export async function streamSse<T>(ctx: RequestContext, source: AsyncIterable<T>, format: StreamFormat<T>, call: UpstreamCall): Promise<undefined> {
  const iterator = source[Symbol.asyncIterator]();
  let first: IteratorResult<T>;
  try {
    first = await iterator.next();
  } catch (err) {
    call.fail(err);
    throw err;
  }
  const sse = new SseWriter(ctx.res);
  try {
    for (let item = first; !item.done; item = await iterator.next()) {
      const { data, event } = format.frame(item.value);
      const pending = sse.event(data, event);
      if (pending) await pending;
      if (!sse.open) break;
    }
    if (sse.open) {
      if (format.done) await sse.done();
      call.finish('ok');
    } else {
      call.finish('aborted');
    }
  } catch (err) {
    call.fail(err);
    if (!ctx.abort.aborted) format.writeError(sse, toGatewayError(err));
  } finally {
    // Leaving early (client gone) closes the source, which releases the upstream connection.
    await iterator.return?.().catch(() => undefined);
    sse.end();
  }
  return undefined;
}

export const CHAT_CHUNK_FORMAT: StreamFormat<ChatCompletionChunk> = {
  frame: (chunk) => ({ data: JSON.stringify(chunk) }),
  writeError: chatStreamError,
  done: true,
};

export function streamChatChunks(ctx: RequestContext, chunks: AsyncIterable<ChatCompletionChunk>, call: UpstreamCall): Promise<undefined> {
  return streamSse(ctx, meterChunks(chunks, call), CHAT_CHUNK_FORMAT, call);
}
