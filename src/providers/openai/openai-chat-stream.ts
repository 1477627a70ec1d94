// Reads an OpenAI-format chat stream (SSE `data: {chunk}` lines ending with `data: [DONE]`) into
// chat-completion chunks, for library callers. An `{"error": ...}` event mid-stream becomes a
// GatewayError instead of a silently truncated answer.
import { GatewayError } from '../../http/errors';
import { parseSse } from '../http/sse-parser';
import { withheld } from '../http/upstream-errors';
import type { ChatCompletionChunk } from '../types';

interface StreamErrorPayload {
  error?: { message?: unknown; type?: unknown } | string;
}

export async function* readChatChunks(body: AsyncIterable<Buffer>, providerName: string): AsyncIterable<ChatCompletionChunk> {
  let done = false;
  let finished = false;
  for await (const event of parseSse(body)) {
    if (event.data === '[DONE]') {
      done = true;
      break;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(event.data);
    } catch (err) {
      throw new GatewayError('upstream_error', `Upstream provider ${providerName} sent a stream event that is not JSON.`, {
        cause: withheld(err, 'a stream event did not parse as JSON'),
      });
    }
    const error = (parsed as StreamErrorPayload).error;
    if (error !== undefined && error !== null) {
      const message = typeof error === 'string' ? error : typeof error.message === 'string' ? error.message : 'stream error';
      throw new GatewayError('upstream_error', `Upstream provider ${providerName} failed mid-stream: ${message}`);
    }
    const chunk = parsed as ChatCompletionChunk;
    if (!finished && chunk.choices?.some((choice) => choice.finish_reason)) finished = true;
    yield chunk;
  }
  // Some OpenAI-compatible servers omit [DONE]: a stream that reached a finish_reason is complete; one
  // cut before either is a failure, not a shorter answer.
  if (!done && !finished) {
    throw new GatewayError('upstream_error', `Upstream provider ${providerName} ended the stream before it finished.`);
  }
}
