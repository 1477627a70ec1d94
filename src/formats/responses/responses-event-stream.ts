// Canonical stream parts → the Responses SSE event sequence (spec "Events"; Open Responses
// *StreamingEvent schemas). One instance per response owns that response's stream state.
//
//   response.created → response.in_progress
//   per text block:      output_item.added (message) → content_part.added → output_text.delta…
//                        → output_text.done → content_part.done → output_item.done
//   per refusal block:   the same with a `refusal` part, refusal.delta… and refusal.done
//   per tool call:       output_item.added (function_call, arguments '') → function_call_arguments.delta…
//                        → function_call_arguments.done → output_item.done
//   per reasoning block: output_item.added (reasoning) → reasoning_summary_part.added
//                        → reasoning_summary_text.delta… → reasoning_summary_text.done
//                        → reasoning_summary_part.done → output_item.done (summary part only with text)
//   per server-side tool call (a function the context's serverTools names: hosted svc_* or MCP):
//                        output_item.added (svc_call / mcp_call, in_progress) → svc_call_arguments.delta…
//                        (mcp_call_arguments.delta…) → …_arguments.done; then, once the gateway ran it
//                        (a server-tool-result part), output_item.done with its output or error
//   per MCP call awaiting approval: output_item.added → output_item.done (mcp_approval_request)
//   native Responses items: output_item.added → output_item.done
//   then exactly one terminal event: response.completed, response.incomplete (length, content
//   filter), or, on any failure, `error` followed by response.failed.
//
// A message or function_call item that generation stopped in (the token limit or a content filter
// ended the response) is `incomplete`, not `completed` (Open Responses MessageStatus and
// FunctionCallStatus): a cut call's arguments are not a call to run. A refusal is never cut: it is
// why the response stopped, said whole. Providers close their last block before they say why they
// stopped, so with `marksCutItems` the output_item.done of the last closed message or call waits for
// the next part, and is `incomplete` when that part is such a finish.
//
// Blocks may interleave; each gets its output_index when it opens, so indexes follow the order
// in which items were added (what clients accumulating `output` by index expect). Sequence numbers
// run from `startSequence` without gaps. Every event and snapshot is a fresh object, never touched
// again, so events can be serialised later (an event log written in batches).
import type { StreamPart } from '../../canonical/model';
import { mintId } from './ids';
import { functionCallItem, messageContent, messageItem, nativeItem, reasoningItem } from './output-items';
import {
  endedEarly,
  itemOfBlock,
  streamErrorOf,
  type Block,
  type NativeBlock,
  type ReasoningBlock,
  type ServerCallBlock,
  type TextBlock,
  type ToolCallBlock,
} from './stream-blocks';
import {
  assembleResponseObject,
  callerModel,
  echoRequestFields,
  FINISHED_WITH_ERROR,
  outcomeOf,
  usageToResponses,
  type ResponseContext,
} from './response-object';
import type {
  EchoedRequestFields,
  OutputItem,
  ResponseLifecycleEventType,
  ResponseObject,
  ResponseStatus,
  ResponseUsage,
  ResponsesEvent,
  StreamErrorPayload,
} from './wire-types';

/** What a function name the model calls stands for, when the gateway runs it (the tool loop says). */
export type ServerTool =
  | { item: 'svc_call' }
  | { item: 'mcp_call'; serverLabel: string; name: string }
  /** An MCP call the caller must approve first: shown as an `mcp_approval_request`, not run. */
  | { item: 'mcp_approval_request'; serverLabel: string; name: string };

export interface ResponsesEventStreamContext extends ResponseContext {
  /** Server-side tools by the function name the model calls them by (absent: every call is the caller's). */
  serverTools?: (functionName: string, callId?: string) => ServerTool | undefined;
  /** The sequence number of the first event (default 0). */
  startSequence?: number;
  /**
   * The stream continues one that an earlier writer began (an agent run's response, whose execution may move
   * to another process): `response.created` and `response.in_progress` are in its log already, so
   * start() emits nothing, and `startOutputIndex` items were opened before (the first new item's index).
   */
  continues?: { startOutputIndex: number };
  /**
   * Hold the output_item.done of the last closed message or function_call until the next part, so that an
   * item the response ended incomplete in is done as `incomplete` (see the header). For a writer that
   * pushes every part of one model call up to its finish; not for one that may stop between parts.
   */
  marksCutItems?: boolean;
}

/** A refusal block: said whole, never `incomplete` (see the header). */
const isRefusal = (block: Block): boolean => block.kind === 'text' && block.refusal === true;

/** An MCP call awaiting approval, buffered until its arguments are complete. */
interface ApprovalBlock {
  kind: 'approval';
  callId: string;
  server: Extract<ServerTool, { item: 'mcp_approval_request' }>;
  arguments: string;
}

export class ResponsesEventStream {
  /** The response id (`resp_…`), fixed for the stream's life. */
  readonly id: string;
  private readonly model: string;
  private readonly createdAt: number;
  private readonly now: () => number;
  private readonly echoed: EchoedRequestFields;
  private readonly conversationId: string | undefined;
  private sequence: number;
  private started: boolean;
  /** output_index of this stream's first item (items opened by an earlier writer come before it). */
  private readonly indexBase: number;
  private status: ResponseStatus = 'in_progress';
  private incompleteReason: string | undefined;
  private error: { code: string; message: string } | undefined;
  private usage: ResponseUsage | null = null;
  private completedAt: number | null = null;
  private readonly blocks: Block[] = [];
  /** Open blocks by their stream part id. */
  private readonly open = new Map<string, TextBlock | ToolCallBlock | ReasoningBlock | ServerCallBlock | ApprovalBlock>();
  /** Server-side calls whose arguments are complete, awaiting their result, by call id. */
  private readonly running = new Map<string, ServerCallBlock>();
  private readonly marksCutItems: boolean;
  /** The last closed message or call whose output_item.done waits for the next part (marksCutItems). */
  private held: TextBlock | ToolCallBlock | null = null;
  /** Which function names the gateway runs (settable: an agent run's steps each offer their own tools). */
  serverTools: ((functionName: string, callId?: string) => ServerTool | undefined) | undefined;

  constructor(ctx: ResponsesEventStreamContext) {
    this.now = ctx.now ?? Date.now;
    this.id = ctx.id ?? mintId('resp');
    this.model = callerModel(ctx);
    this.createdAt = ctx.createdAt ?? Math.floor(this.now() / 1000);
    this.echoed = echoRequestFields(ctx.request);
    this.conversationId = ctx.conversationId;
    this.sequence = ctx.startSequence ?? 0;
    this.started = ctx.continues !== undefined;
    this.indexBase = ctx.continues?.startOutputIndex ?? 0;
    this.serverTools = ctx.serverTools;
    this.marksCutItems = ctx.marksCutItems === true;
  }

  /** The sequence number the next event will carry. */
  get nextSequenceNumber(): number {
    return this.sequence;
  }

  /** Whether the terminal event was emitted (nothing follows it). */
  get finished(): boolean {
    return this.status !== 'in_progress';
  }

  /** `response.created` and `response.in_progress` (once; later calls return nothing). */
  start(): ResponsesEvent[] {
    if (this.started) return [];
    this.started = true;
    return [this.lifecycle('response.created'), this.lifecycle('response.in_progress')];
  }

  /** The events of one stream part (the start events first if start() was not called). */
  push(part: StreamPart): ResponsesEvent[] {
    if (this.finished) return [];
    const events = this.start();
    // Generation went on after the held item: it was done when it closed (a finish decides for itself).
    if (part.type !== 'finish') this.release(events);
    switch (part.type) {
      case 'start':
        break;
      case 'text-start':
        this.openText(part.id, events, part.refusal === true);
        break;
      case 'text-delta': {
        const block = this.textBlock(part.id, events);
        if (part.delta === '') break;
        block.text += part.delta;
        const where = { item_id: block.itemId, output_index: block.outputIndex, content_index: 0 };
        if (block.refusal === true) events.push({ type: 'response.refusal.delta', sequence_number: this.sequence++, ...where, delta: part.delta });
        else events.push({ type: 'response.output_text.delta', sequence_number: this.sequence++, ...where, delta: part.delta, logprobs: [] });
        break;
      }
      case 'reasoning-start': {
        const block = this.openReasoning(part.id, events);
        if (part.redactedData !== undefined) block.redactedData = part.redactedData;
        if (part.encryptedContent !== undefined) block.encryptedContent = part.encryptedContent;
        break;
      }
      case 'reasoning-delta':
        this.reasoningDelta(this.reasoningBlock(part.id, events), part.delta, events);
        break;
      case 'reasoning-end': {
        const block = this.open.get(part.id);
        if (block?.kind !== 'reasoning') break;
        if (part.signature !== undefined) block.signature = part.signature;
        this.close(part.id, events);
        break;
      }
      case 'tool-call-start': {
        const server = this.serverTools?.(part.name, part.callId);
        if (server === undefined) this.openToolCall(part.id, part.callId, part.name, events);
        else if (server.item === 'mcp_approval_request') this.open.set(part.id, { kind: 'approval', callId: part.callId, server, arguments: '' });
        else this.openServerCall(part.id, part.callId, part.name, server, events);
        break;
      }
      case 'tool-call-delta': {
        // A delta for a call never started has no name to call: a provider bug, not guessed at.
        const block = this.open.get(part.id);
        if (part.delta === '') break;
        if (block?.kind === 'approval') block.arguments += part.delta;
        if (block?.kind === 'server-call') {
          block.arguments += part.delta;
          events.push({
            type: block.item === 'svc_call' ? 'response.svc_call_arguments.delta' : 'response.mcp_call_arguments.delta',
            sequence_number: this.sequence++,
            item_id: block.itemId,
            output_index: block.outputIndex,
            delta: part.delta,
          });
        }
        if (block?.kind !== 'tool-call') break;
        block.arguments += part.delta;
        events.push({
          type: 'response.function_call_arguments.delta',
          sequence_number: this.sequence++,
          item_id: block.itemId,
          output_index: block.outputIndex,
          delta: part.delta,
        });
        break;
      }
      case 'text-end':
      case 'tool-call-end':
        this.close(part.id, events);
        break;
      case 'native': {
        const item = nativeItem(part.format, part.value);
        if (item === undefined) break; // another format's block: no Responses item to show it as
        const block: NativeBlock = { kind: 'native', outputIndex: this.indexBase + this.blocks.length, item, open: false };
        this.blocks.push(block);
        events.push({ type: 'response.output_item.added', sequence_number: this.sequence++, output_index: block.outputIndex, item });
        events.push({ type: 'response.output_item.done', sequence_number: this.sequence++, output_index: block.outputIndex, item });
        break;
      }
      case 'server-tool-result': {
        const block = this.running.get(part.callId);
        if (block === undefined) break;
        this.running.delete(part.callId);
        block.open = false;
        block.status = part.status;
        block.output = part.status === 'completed' ? part.output : null;
        block.error = part.status === 'failed' ? (part.error ?? part.output) : null;
        events.push({
          type: 'response.output_item.done',
          sequence_number: this.sequence++,
          output_index: block.outputIndex,
          item: itemOfBlock(block, 'completed'),
        });
        break;
      }
      case 'finish': {
        const outcome = outcomeOf(part.finishReason);
        // Stopped short: the item being written (the last closed, or one still open) was cut.
        const cut = outcome.status === 'incomplete';
        if (cut && this.held && !isRefusal(this.held)) this.held.cut = true;
        this.release(events);
        for (const id of [...this.open.keys()]) this.close(id, events, { cut });
        this.usage = usageToResponses(part.usage);
        if (outcome.status === 'failed') {
          events.push(...this.failWith({ type: 'server_error', ...FINISHED_WITH_ERROR, param: null }));
          break;
        }
        this.status = outcome.status;
        this.incompleteReason = outcome.incompleteReason;
        if (outcome.status === 'completed') this.completedAt = Math.floor(this.now() / 1000);
        events.push(this.lifecycle(outcome.status === 'completed' ? 'response.completed' : 'response.incomplete'));
        break;
      }
      case 'error':
        events.push(...this.fail(part.error));
        break;
    }
    return events;
  }

  /**
   * The source of stream parts ended. After a `finish` part this adds nothing; without one the
   * upstream stopped early, which is a failure (`error` + `response.failed`), so every stream ends
   * with exactly one terminal event.
   */
  finish(): ResponsesEvent[] {
    if (this.finished) return [];
    return this.fail(endedEarly());
  }

  /**
   * A failure after the stream started (a thrown source error, an upstream cut, a timeout): the
   * `error` event, then `response.failed` with the output so far (open items `incomplete`).
   */
  fail(err: unknown): ResponsesEvent[] {
    if (this.finished) return [];
    const events = this.start();
    this.release(events);
    return [...events, ...this.failWith(streamErrorOf(err))];
  }

  /** Runs a whole source through the stream: start, every part, the terminal event (a throw becomes fail). */
  async *events(source: AsyncIterable<StreamPart>): AsyncGenerator<ResponsesEvent> {
    yield* this.start();
    const iterator = source[Symbol.asyncIterator]();
    let done = false;
    try {
      while (!this.finished) {
        let next: IteratorResult<StreamPart>;
        try {
          next = await iterator.next();
        } catch (err) {
          done = true;
          yield* this.fail(err);
          return;
        }
        if (next.done === true) {
          done = true;
          break;
        }
        yield* this.push(next.value);
      }
      yield* this.finish();
    } finally {
      // Parts after the terminal event, or a consumer that stopped reading: release the source.
      if (!done) await iterator.return?.();
    }
  }

  /** The response object as it stands now (a snapshot: in progress, or final once finished). */
  response(): ResponseObject {
    const failed = this.status === 'failed';
    const output = this.blocks.map((block) =>
      itemOfBlock(block, block.open ? (failed ? 'incomplete' : 'in_progress') : 'cut' in block && block.cut === true ? 'incomplete' : 'completed'),
    );
    return assembleResponseObject(
      {
        id: this.id,
        model: this.model,
        createdAt: this.createdAt,
        completedAt: this.completedAt,
        status: this.status,
        incompleteReason: this.incompleteReason,
        error: this.error,
        output,
        usage: this.usage,
      },
      this.echoed,
      this.conversationId,
    );
  }

  private lifecycle(type: ResponseLifecycleEventType): ResponsesEvent {
    return { type, sequence_number: this.sequence++, response: this.response() };
  }

  private failWith(payload: StreamErrorPayload): ResponsesEvent[] {
    this.status = 'failed';
    this.error = { code: payload.code, message: payload.message };
    const error: ResponsesEvent = {
      type: 'error',
      sequence_number: this.sequence++,
      code: payload.code,
      message: payload.message,
      param: payload.param,
      error: payload,
    };
    return [error, this.lifecycle('response.failed')];
  }

  private added(block: Block, item: OutputItem, events: ResponsesEvent[]): void {
    events.push({ type: 'response.output_item.added', sequence_number: this.sequence++, output_index: block.outputIndex, item });
  }

  private openText(id: string, events: ResponsesEvent[], refusal = false): TextBlock {
    const block: TextBlock = { kind: 'text', outputIndex: this.indexBase + this.blocks.length, itemId: mintId('msg'), text: '', open: true };
    if (refusal) block.refusal = true;
    this.blocks.push(block);
    this.open.set(id, block);
    this.added(block, messageItem(block.itemId, 'in_progress', []), events);
    events.push({
      type: 'response.content_part.added',
      sequence_number: this.sequence++,
      item_id: block.itemId,
      output_index: block.outputIndex,
      content_index: 0,
      part: messageContent('', block.refusal),
    });
    return block;
  }

  /** The open text block `id` (opened now if the provider skipped text-start). */
  private textBlock(id: string, events: ResponsesEvent[]): TextBlock {
    const block = this.open.get(id);
    return block?.kind === 'text' ? block : this.openText(id, events);
  }

  private openReasoning(id: string, events: ResponsesEvent[]): ReasoningBlock {
    const block: ReasoningBlock = {
      kind: 'reasoning',
      outputIndex: this.indexBase + this.blocks.length,
      itemId: mintId('rs'),
      text: '',
      summaryAdded: false,
      open: true,
    };
    this.blocks.push(block);
    this.open.set(id, block);
    this.added(block, reasoningItem(block.itemId, [], {}), events);
    return block;
  }

  private reasoningBlock(id: string, events: ResponsesEvent[]): ReasoningBlock {
    const block = this.open.get(id);
    return block?.kind === 'reasoning' ? block : this.openReasoning(id, events);
  }

  private reasoningDelta(block: ReasoningBlock, delta: string, events: ResponsesEvent[]): void {
    if (delta === '') return;
    const where = { item_id: block.itemId, output_index: block.outputIndex, summary_index: 0 };
    if (!block.summaryAdded) {
      block.summaryAdded = true;
      events.push({ type: 'response.reasoning_summary_part.added', sequence_number: this.sequence++, ...where, part: { type: 'summary_text', text: '' } });
    }
    block.text += delta;
    events.push({ type: 'response.reasoning_summary_text.delta', sequence_number: this.sequence++, ...where, delta });
  }

  private openServerCall(
    id: string,
    callId: string,
    name: string,
    server: Exclude<ServerTool, { item: 'mcp_approval_request' }>,
    events: ResponsesEvent[],
  ): void {
    const block: ServerCallBlock = {
      kind: 'server-call',
      item: server.item,
      outputIndex: this.indexBase + this.blocks.length,
      itemId: mintId(server.item === 'svc_call' ? 'sc' : 'mcp'),
      callId,
      name: server.item === 'svc_call' ? name : server.name,
      serverLabel: server.item === 'mcp_call' ? server.serverLabel : '',
      arguments: '',
      output: null,
      error: null,
      status: 'in_progress',
      open: true,
    };
    this.blocks.push(block);
    this.open.set(id, block);
    this.added(block, itemOfBlock(block, 'in_progress'), events);
  }

  private openToolCall(id: string, callId: string, name: string, events: ResponsesEvent[]): void {
    const block: ToolCallBlock = {
      kind: 'tool-call',
      outputIndex: this.indexBase + this.blocks.length,
      itemId: mintId('fc'),
      callId,
      name,
      arguments: '',
      open: true,
    };
    this.blocks.push(block);
    this.open.set(id, block);
    this.added(block, functionCallItem(block.itemId, 'in_progress', callId, name, ''), events);
  }

  /** The held item's output_item.done (`incomplete` when it was cut), if one is held. */
  private release(events: ResponsesEvent[]): void {
    const block = this.held;
    if (block === null) return;
    this.held = null;
    events.push({
      type: 'response.output_item.done',
      sequence_number: this.sequence++,
      output_index: block.outputIndex,
      item: itemOfBlock(block, block.cut === true ? 'incomplete' : 'completed'),
    });
  }

  /**
   * The done events of open block `id`, then its output_item.done (held back for a message or call,
   * with marksCutItems). `finishing`: closed by the finish part, `cut` when the response ends incomplete.
   */
  private close(id: string, events: ResponsesEvent[], finishing?: { cut: boolean }): void {
    const block = this.open.get(id);
    if (block === undefined) return;
    this.open.delete(id);
    if (block.kind === 'approval') {
      // The whole request at once, as OpenAI sends it: nothing of it runs until the caller approves.
      const item = {
        type: 'mcp_approval_request',
        id: `mcpr_${block.callId}`,
        server_label: block.server.serverLabel,
        name: block.server.name,
        arguments: block.arguments,
      };
      const native: NativeBlock = { kind: 'native', outputIndex: this.indexBase + this.blocks.length, item, open: false };
      this.blocks.push(native);
      events.push({ type: 'response.output_item.added', sequence_number: this.sequence++, output_index: native.outputIndex, item });
      events.push({ type: 'response.output_item.done', sequence_number: this.sequence++, output_index: native.outputIndex, item });
      return;
    }
    if (block.kind === 'server-call') {
      // Arguments complete; the item stays open until the gateway has run the call.
      events.push({
        type: block.item === 'svc_call' ? 'response.svc_call_arguments.done' : 'response.mcp_call_arguments.done',
        sequence_number: this.sequence++,
        item_id: block.itemId,
        output_index: block.outputIndex,
        arguments: block.arguments,
      });
      this.running.set(block.callId, block);
      return;
    }
    block.open = false;
    if (finishing?.cut === true && (block.kind === 'text' || block.kind === 'tool-call') && !isRefusal(block)) block.cut = true;
    const where = { item_id: block.itemId, output_index: block.outputIndex };
    switch (block.kind) {
      case 'text':
        if (block.refusal === true) {
          events.push({ type: 'response.refusal.done', sequence_number: this.sequence++, ...where, content_index: 0, refusal: block.text });
        } else {
          events.push({ type: 'response.output_text.done', sequence_number: this.sequence++, ...where, content_index: 0, text: block.text, logprobs: [] });
        }
        events.push({
          type: 'response.content_part.done',
          sequence_number: this.sequence++,
          ...where,
          content_index: 0,
          part: messageContent(block.text, block.refusal),
        });
        break;
      case 'tool-call':
        events.push({
          type: 'response.function_call_arguments.done',
          sequence_number: this.sequence++,
          ...where,
          name: block.name,
          arguments: block.arguments,
        });
        break;
      case 'reasoning':
        if (block.summaryAdded) {
          events.push({ type: 'response.reasoning_summary_text.done', sequence_number: this.sequence++, ...where, summary_index: 0, text: block.text });
          events.push({
            type: 'response.reasoning_summary_part.done',
            sequence_number: this.sequence++,
            ...where,
            summary_index: 0,
            part: { type: 'summary_text', text: block.text },
          });
        }
        break;
    }
    if (block.kind === 'text' || block.kind === 'tool-call') {
      this.held = block;
      // Held until the next part says whether generation stopped in this item; closed by the finish, it knows.
      if (this.marksCutItems && finishing === undefined) return;
      this.release(events);
      return;
    }
    events.push({
      type: 'response.output_item.done',
      sequence_number: this.sequence++,
      output_index: block.outputIndex,
      item: itemOfBlock(block, 'completed'),
    });
  }
}
