// The writer of an agent run's Responses stream (run-response.ts says what the response is): one per
// execution of a run started through the Responses interface, wherever the run executes (the gateway
// with the inline queue, a BullMQ worker in another process). The run's step model calls are streamed
// and their canonical parts go through ONE ResponsesEventStream (src/formats/responses) for the whole
// run, so the caller sees every item the run makes (reasoning, messages, function calls) with
// output_index and sequence numbers running on across calls; the events go to the batched event log
// (published live at once, stored in batches). Judge calls are not part of the response.
//
// A call's own `start`/`finish` parts do not start or end the response: block ids are made unique per
// call, blocks a call leaves open are closed when it ends, and its usage is added up. The response
// ends when the run does: complete() after success (output: the run's final assistant message as one
// `message` item, what polling shows too), fail() after a failure or a timeout (`error`, then
// `response.failed`); the log is flushed before the response's final state is written, so a response
// read as finished has its whole log. An execution that stops without ending the run (shutdown, lease
// taken over, cancelled by someone else, who ends the response) only flushes what it wrote.
//
// Continuing after an earlier execution (a resumed run): numbered after the last stored event, with
// output_index after the items already opened. Events the dead execution never stored are gone; a reader
// that saw them live still ends properly (replay.ts renumbers a late ending).
import type { Logger } from 'winston';
import type { StreamPart, Usage } from '../canonical/model';
import { mintId, ResponsesEventStream, type OutputItem, type ResponsesEvent, type ResponsesEventStreamContext } from '../formats/responses';
import { messageItem, outputText } from '../formats/responses/output-items';
import { GatewayError } from '../http/errors';
import type { ResponseEventLog } from '../responses';
import type { ResponseRepository } from '../store/port';
import type { RunRecord } from '../store/types';
import { runResponseId } from './run-response';
import type { RunError } from './run-errors';

export interface RunResponseStreamDeps {
  responses: Pick<ResponseRepository, 'get' | 'listEvents' | 'finish'>;
  log: ResponseEventLog;
  logger: Logger;
}

type BlockKind = 'text' | 'reasoning' | 'tool-call';

const ADDED = 'response.output_item.added';

function addUsage(total: Usage, usage: Usage): Usage {
  const sum = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));
  const cached = sum(total.cachedInputTokens, usage.cachedInputTokens);
  const reasoning = sum(total.reasoningTokens, usage.reasoningTokens);
  return {
    inputTokens: total.inputTokens + usage.inputTokens,
    outputTokens: total.outputTokens + usage.outputTokens,
    ...(cached !== undefined ? { cachedInputTokens: cached } : {}),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
  };
}

const textOf = (item: OutputItem): string | null =>
  item.type === 'message' && Array.isArray(item['content'])
    ? (item['content'] as unknown[])
        .map((part) => (part !== null && typeof part === 'object' ? String((part as Record<string, unknown>)['text'] ?? '') : ''))
        .join('')
    : null;

export class RunResponseStream {
  private calls = 0;
  private usage: Usage = { inputTokens: 0, outputTokens: 0 };
  private ended = false;

  private constructor(
    private readonly deps: RunResponseStreamDeps,
    readonly id: string,
    private readonly events: ResponsesEventStream,
  ) {}

  /**
   * The writer of `run`'s response for this execution; null when the run was not started through the
   * Responses interface, or its response has ended already (a failed run retried: its stream ended with
   * the failure; the run itself is read at /v1/runs/{runId}).
   */
  static async open(deps: RunResponseStreamDeps, run: RunRecord): Promise<RunResponseStream | null> {
    if (run.trigger !== 'responses') return null;
    const id = runResponseId(run.id);
    const record = await deps.responses.get(id);
    if (!record || record.status !== 'in_progress') return null;
    const stored = await deps.responses.listEvents(id, -1);
    const last = stored.reduce((max, e) => Math.max(max, e.sequenceNumber), -1);
    const opened = stored.reduce(
      (max, e) => (e.event === ADDED && typeof e.data['output_index'] === 'number' ? Math.max(max, e.data['output_index']) : max),
      -1,
    );
    const createdAt = typeof record.body['created_at'] === 'number' ? record.body['created_at'] : undefined;
    const events = new ResponsesEventStream({
      request: record.body,
      id,
      model: record.model,
      ...(createdAt !== undefined ? { createdAt } : {}),
      startSequence: last + 1,
      // The POST wrote response.created and response.in_progress; a stream with none is started here.
      ...(last >= 0 ? { continues: { startOutputIndex: opened + 1 } } : {}),
    });
    const stream = new RunResponseStream(deps, id, events);
    stream.emit(events.start());
    return stream;
  }

  /** The function names the gateway runs in the step being executed (their calls show as svc_call / mcp_call items). */
  offer(serverTools: ResponsesEventStreamContext['serverTools']): void {
    this.events.serverTools = serverTools;
  }

  /** One step model call's parts, passed on unchanged while their events are written. */
  async *tap(parts: AsyncIterable<StreamPart>): AsyncGenerator<StreamPart> {
    const call = ++this.calls;
    const open = new Map<string, BlockKind>();
    try {
      for await (const part of parts) {
        this.push(call, open, part);
        yield part;
      }
    } finally {
      // Blocks the call left open end with it (a provider may finish without closing them).
      if (!this.ended) for (const [id, kind] of open) this.emit(this.events.push({ type: `${kind}-end`, id: `${call}:${id}` }));
    }
  }

  private push(call: number, open: Map<string, BlockKind>, part: StreamPart): void {
    if (this.ended) return;
    const id = (partId: string): string => `${call}:${partId}`;
    switch (part.type) {
      case 'start':
      case 'error': // the step fails, the run with it, and fail() ends the response
        return;
      case 'finish':
        this.usage = addUsage(this.usage, part.usage);
        return;
      case 'native':
      case 'server-tool-result':
        this.emit(this.events.push(part));
        return;
      case 'text-start':
      case 'text-delta':
        open.set(part.id, 'text');
        this.emit(this.events.push({ ...part, id: id(part.id) }));
        return;
      case 'reasoning-start':
      case 'reasoning-delta':
        open.set(part.id, 'reasoning');
        this.emit(this.events.push({ ...part, id: id(part.id) }));
        return;
      case 'tool-call-start':
      case 'tool-call-delta':
        open.set(part.id, 'tool-call');
        this.emit(this.events.push({ ...part, id: id(part.id) }));
        return;
      case 'text-end':
      case 'reasoning-end':
      case 'tool-call-end':
        open.delete(part.id);
        this.emit(this.events.push({ ...part, id: id(part.id) }));
        return;
    }
  }

  /** The run succeeded: `response.completed` with the final assistant message as the output. */
  async complete(finalText: string | null): Promise<void> {
    if (this.ended) return;
    const events = this.events.push({ type: 'finish', finishReason: 'stop', usage: this.usage });
    const streamed = this.events.response().output;
    const same = finalText === null ? undefined : [...streamed].reverse().find((item) => textOf(item) === finalText);
    const itemId = typeof same?.id === 'string' ? same.id : mintId('msg');
    const output: OutputItem[] = finalText === null || finalText === '' ? [] : [messageItem(itemId, 'completed', [outputText(finalText)])];
    await this.end('completed', events, output);
  }

  /** The run failed, or its timeout cancelled it: `error`, then `response.failed`. */
  async fail(error: RunError): Promise<void> {
    if (this.ended) return;
    const events = this.events.fail(new GatewayError('internal', error.message, { type: 'server_error', wireCode: error.code }));
    await this.end('failed', events, []);
  }

  /** This execution stops without ending the run: what it wrote is stored, nothing more. */
  async stop(): Promise<void> {
    this.ended = true;
    await this.flush();
  }

  private async end(status: 'completed' | 'failed', events: ResponsesEvent[], output: OutputItem[]): Promise<void> {
    this.ended = true;
    const terminal = events[events.length - 1];
    if (!terminal || !('response' in terminal)) return;
    // Polling and the terminal event show the same object: the run's answer, not every step's items.
    const body = { ...(terminal.response as unknown as Record<string, unknown>), output };
    this.emit([...events.slice(0, -1), { ...terminal, response: body } as unknown as ResponsesEvent]);
    await this.flush();
    await this.deps.responses.finish(this.id, { status, body }, { whenStatus: 'in_progress' });
  }

  private emit(events: readonly ResponsesEvent[]): void {
    for (const event of events) {
      this.deps.log.append(this.id, { sequenceNumber: event.sequence_number, event: event.type, data: event as unknown as Record<string, unknown> });
    }
  }

  private async flush(): Promise<void> {
    try {
      await this.deps.log.flush(this.id);
    } catch (err) {
      // The log is incomplete; the final state is still written (a plain GET stays right, and a replay
      // ends from the stored body).
      this.deps.logger.warn('run response event log not fully stored', { responseId: this.id, errorName: err instanceof Error ? err.name : 'unknown' });
    }
  }
}
