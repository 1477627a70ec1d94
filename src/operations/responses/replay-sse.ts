// A stored response's events as SSE (GET /v1/responses/{id}?stream=true, and POST /v1/responses with
// `model: agent/<id>` and `stream: true`): the event log after `startingAfter`, then live until the
// final event, wherever its writer runs (src/responses/replay.ts).
import { SseWriter } from '../../http/sse';
import type { RequestContext } from '../../pipeline/context';
import { replayEvents } from '../../responses';
import type { AppServices } from '../../services';

export async function streamStoredEvents(
  ctx: RequestContext,
  services: Pick<AppServices, 'store' | 'responseStreams'>,
  responseId: string,
  startingAfter: number,
): Promise<void> {
  const events = replayEvents({
    responses: services.store.responses,
    live: services.responseStreams.live,
    responseId,
    startingAfter,
    signal: ctx.abort.signal,
  });
  const sse = new SseWriter(ctx.res);
  try {
    for await (const event of events) {
      const pending = sse.event(event.json ?? JSON.stringify(event.data), event.event, event.sequenceNumber);
      if (pending) await pending;
      if (!sse.open) break;
    }
  } finally {
    sse.end();
  }
}
