// What the real SDKs assemble from a stream the gateway renders: the OpenAI SDK's ChatCompletionStream
// from chat.completion.chunk objects, the Anthropic SDK's MessageStream from Messages events. Both read
// a stream body of newline-delimited JSON.
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import type { MessageEvent } from '../../src/formats/anthropic-messages';
import type { ChatCompletionChunk } from '../../src/formats/chat';

function ndjson(values: readonly unknown[]): ReadableStream<Uint8Array> {
  const lines = values.map((value) => JSON.stringify(value) + '\n').join('');
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines));
      controller.close();
    },
  });
}

/** The completion the OpenAI SDK assembles (what `chat.completions.stream().finalChatCompletion()` returns). */
export function openAiFinalCompletion(chunks: readonly ChatCompletionChunk[]): ReturnType<ChatCompletionStream['finalChatCompletion']> {
  return ChatCompletionStream.fromReadableStream(ndjson(chunks)).finalChatCompletion();
}

/** The message the Anthropic SDK assembles (what `messages.stream().finalMessage()` returns). */
export function anthropicFinalMessage(events: readonly MessageEvent[]): ReturnType<MessageStream['finalMessage']> {
  return MessageStream.fromReadableStream(ndjson(events.map((event) => event.data))).finalMessage();
}
