// Writes chat-completion chunks produced by a provider's chatStream() (translated providers, demo) as
// chat-completions SSE: one `data:` event per chunk as it arrives, `data: [DONE]` at the end, an
// error event if the provider fails mid-stream.
import type { RequestContext } from '../../pipeline/context';
import type { ChatCompletionChunk } from '../../providers/types';
import { toGatewayError } from '../../http/errors';
import { SseWriter } from '../../http/sse';
import { chatStreamError } from './relay';
import type { UpstreamCall } from './upstream-call';

/** Starts the provider stream first, so a failure before the first chunk is a normal HTTP error. */
export async function streamChatChunks(ctx: RequestContext, chunks: AsyncIterable<ChatCompletionChunk>, call: UpstreamCall): Promise<undefined> {
  const iterator = chunks[Symbol.asyncIterator]();
  let first: IteratorResult<ChatCompletionChunk>;
  try {
    first = await iterator.next();
  } catch (err) {
    call.fail(err);
    throw err;
  }
  const sse = new SseWriter(ctx.res);
  let prompt = 0;
  let completion = 0;
  try {
    for (let item = first; !item.done; item = await iterator.next()) {
      const usage = item.value.usage;
      if (usage) {
        prompt = usage.prompt_tokens;
        completion = usage.completion_tokens;
      }
      const pending = sse.event(JSON.stringify(item.value));
      if (pending) await pending;
      if (!sse.open) {
        await iterator.return?.();
        break;
      }
    }
    if (sse.open) {
      sse.done();
      call.finish('ok');
    } else {
      call.finish('aborted');
    }
  } catch (err) {
    call.fail(err);
    if (!ctx.signal.aborted) chatStreamError(sse, toGatewayError(err));
  } finally {
    call.usage(prompt, completion);
    sse.end();
  }
  return undefined;
}
