// Anthropic's (and Vertex's) streamed replies are Server-Sent Events whose `data` is the event JSON
// (its `type` repeats the SSE `event` name).
import { GatewayError } from '../../http/errors';
import { parseSse } from '../http/sse-parser';
import { withheld } from '../http/upstream-errors';
import type { AnthropicStreamEvent } from './anthropic-wire-types';

export async function* anthropicSseEvents(body: AsyncIterable<Buffer>): AsyncIterable<AnthropicStreamEvent> {
  for await (const sse of parseSse(body)) {
    if (sse.data === '' || sse.data === '[DONE]') continue;
    let event: unknown;
    try {
      event = JSON.parse(sse.data);
    } catch (err) {
      throw new GatewayError('upstream_error', 'The upstream stream sent an event that is not JSON.', {
        cause: withheld(err, 'a stream event did not parse as JSON'),
      });
    }
    if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') continue;
    yield event as AnthropicStreamEvent;
  }
}
