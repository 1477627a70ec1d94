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
  let started: () => void = () => undefined;
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const events = replayEvents({
    responses: services.store.responses,
    live: services.responseStreams.live,
    responseId,
    startingAfter,
    signal: ctx.abort.signal,
    onStarted: () => started(),
  });
  // The stream's 200 is sent once the replay's first store read succeeded (or it ended or yielded
  // at once): a failure before that is a JSON error (spec "Events" rule 2), not an empty stream.
  let next = events.next();
  await Promise.race([startedPromise, next]);
  const sse = new SseWriter(ctx.res);
  try {
    for (let result = await next; !result.done; result = await next) {
      const event = result.value;
      const pending = sse.event(event.json ?? JSON.stringify(event.data), event.event, event.sequenceNumber);
      if (pending) await pending;
      if (!sse.open) break;
      next = events.next();
    }
  } finally {
    await events.return();
    sse.end();
  }
}
