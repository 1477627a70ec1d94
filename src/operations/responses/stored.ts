// GET /v1/responses/{response_id} and GET …/input_items (spec "GET /v1/responses/{response_id}",
// "Stored response and input-items list"). A response is readable when it was stored, belongs to the
// caller's organization and has not expired: anything else (never existed, pruned, another
// organization's, `store: false`) is the same 404 `not_found` with no `error.code` (rule 9).
// `?stream=true` replays the event log after `starting_after` (or Last-Event-ID) and continues live
// while the response is still being generated, wherever its writer runs (src/responses/replay.ts).
import { GatewayError } from '../../http/errors';
import type { RequestContext } from '../../pipeline/context';
import { parseStartingAfter } from '../../responses';
import { runIdOfResponse } from '../../runs/run-response';
import type { AppServices } from '../../services';
import type { ResponseRecord } from '../../store/types';
import type { Handler } from '../types';
import { runReplayStart, runResponseVisible } from './agent-invocation';
import { streamStoredEvents } from './replay-sse';

async function visibleResponse(ctx: RequestContext, services: AppServices): Promise<ResponseRecord> {
  const id = ctx.params['response_id'] ?? '';
  const principal = ctx.principal;
  const found = principal ? await services.store.responses.getVisible(principal, id, services.clock.now().toISOString()) : null;
  // An agent run's response (resp_run_<run_id>) also needs its run visible to the caller.
  const record = found && principal && (await runResponseVisible(services, principal, id)) ? found : null;
  if (!record) throw new GatewayError('not_found', `No response found with id '${id}'.`, { param: 'response_id' });
  return record;
}

export const getResponse: Handler = async (ctx, services) => {
  const record = await visibleResponse(ctx, services);
  if (ctx.query['stream'] !== true) return { status: 200, body: record.body };
  const header = ctx.req.headers['last-event-id'];
  const lastEventId = Array.isArray(header) ? header[0] : header;
  const fromRun = runIdOfResponse(record.id) !== null;
  const startingAfter = fromRun ? runReplayStart(ctx.query['starting_after'], lastEventId) : parseStartingAfter(ctx.query['starting_after'], lastEventId);
  await streamStoredEvents(ctx, services, record.id, startingAfter);
  return undefined;
};

export const listResponseInputItems: Handler = async (ctx, services) => {
  const record = await visibleResponse(ctx, services);
  const data = record.inputItems;
  const id = (item: Record<string, unknown> | undefined): string | null => (typeof item?.['id'] === 'string' ? item['id'] : null);
  return { status: 200, body: { object: 'list', data, has_more: false, first_id: id(data[0]), last_id: id(data[data.length - 1]) } };
};
