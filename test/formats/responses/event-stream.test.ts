import assert from 'node:assert/strict';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import type { Response as OpenAIResponse, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { StreamPart, Usage } from '../../../src/canonical/model';
import { GatewayError } from '../../../src/http/errors';
import { ResponsesEventStream, type MessageItem, type OutputItem, type ResponseObject, type ResponsesEvent } from '../../../src/formats/responses';
import { responseResourceErrors, streamingEventErrors } from './open-responses-schemas';

const USAGE: Usage = { inputTokens: 10, outputTokens: 5, reasoningTokens: 2 };
const REQUEST = { model: 'my-model', input: 'hi', tools: [{ type: 'function', name: 'weather', parameters: { type: 'object' } }] };

/** Every event a whole list of parts makes (start, each part, finish), in order. */
function run(parts: StreamPart[], stream = new ResponsesEventStream({ request: REQUEST })): ResponsesEvent[] {
  const events = stream.start();
  for (const part of parts) events.push(...stream.push(part));
  events.push(...stream.finish());
  return events;
}

/** An item's status (reasoning and native items may have none). */
const statusOf = (item: OutputItem | undefined): unknown => (item as { status?: unknown } | undefined)?.status;
/** A message item's text (null for any other item). */
const messageText = (item: OutputItem | undefined): string | null => {
  const part = item?.type === 'message' ? (item as MessageItem).content[0] : undefined;
  return part?.type === 'output_text' ? part.text : null;
};

const types = (events: ResponsesEvent[]): string[] => events.map((event) => event.type);

/** Numbered from `first` without gaps, each event valid against its Open Responses schema. */
function assertWellFormed(events: ResponsesEvent[], first = 0): void {
  events.forEach((event, i) => {
    assert.equal(event.sequence_number, first + i, `event ${i} (${event.type}) is numbered ${event.sequence_number}`);
    assert.deepEqual(streamingEventErrors(event), [], `${event.type}: ${JSON.stringify(event).slice(0, 600)}`);
  });
  const terminal = events.filter((event) => ['response.completed', 'response.incomplete', 'response.failed'].includes(event.type));
  assert.equal(terminal.length, 1, `exactly one terminal event: ${types(events).join(', ')}`);
  assert.equal(events.at(-1), terminal[0], 'the terminal event is the last');
}

/** What the OpenAI SDK's stream accumulator builds from every event before the terminal one. */
function sdkAccumulated(events: ResponsesEvent[]): OpenAIResponse {
  let snapshot: OpenAIResponse | undefined;
  for (const event of events.slice(0, -1)) {
    if (event.type === 'error') continue;
    snapshot = accumulateResponse(event as unknown as ResponseStreamEvent, snapshot);
  }
  assert.ok(snapshot);
  return snapshot;
}

function terminalResponse(events: ResponsesEvent[]): ResponseObject {
  const last = events.at(-1);
  assert.ok(last && 'response' in last);
  return last.response;
}

const textParts = (id: string, ...deltas: string[]): StreamPart[] => [
  { type: 'text-start', id },
  ...deltas.map((delta): StreamPart => ({ type: 'text-delta', id, delta })),
  { type: 'text-end', id },
];

describe('formats/responses: ResponsesEventStream', () => {
  it('streams a text reply: created, in_progress, the message events, completed with output and usage', () => {
    const events = run([
      { type: 'start', id: 'up-1', model: 'upstream-model', created: 1 },
      ...textParts('t', 'Hel', 'lo'),
      { type: 'finish', finishReason: 'stop', usage: USAGE },
    ]);
    assert.deepEqual(types(events), [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    assertWellFormed(events);
    const [created, inProgress, added, partAdded, delta1, , textDone, partDone, itemDone] = events;
    assert.ok(created?.type === 'response.created' && inProgress?.type === 'response.in_progress');
    assert.equal(created.response.status, 'in_progress');
    assert.deepEqual(created.response.output, []);
    assert.equal(created.response.usage, null);
    assert.equal(created.response.model, 'my-model');
    assert.match(created.response.id, /^resp_/);
    assert.ok(added?.type === 'response.output_item.added');
    assert.deepEqual({ ...added.item, id: 'x' }, { id: 'x', type: 'message', status: 'in_progress', role: 'assistant', content: [] });
    const itemId = added.item.id;
    assert.deepEqual(partAdded, {
      type: 'response.content_part.added',
      sequence_number: 3,
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
    });
    assert.deepEqual(delta1, {
      type: 'response.output_text.delta',
      sequence_number: 4,
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      delta: 'Hel',
      logprobs: [],
    });
    assert.notDeepEqual(streamingEventErrors({ ...delta1, content_index: 'zero' } as unknown as ResponsesEvent), [], 'the schema check rejects a wrong type');
    assert.deepEqual(textDone, {
      type: 'response.output_text.done',
      sequence_number: 6,
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      text: 'Hello',
      logprobs: [],
    });
    assert.ok(partDone?.type === 'response.content_part.done' && itemDone?.type === 'response.output_item.done');
    assert.deepEqual(partDone.part, { type: 'output_text', text: 'Hello', annotations: [], logprobs: [] });
    assert.deepEqual(itemDone.item, {
      id: itemId,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }],
    });
    const final = terminalResponse(events);
    assert.equal(final.id, created.response.id);
    assert.equal(final.status, 'completed');
    assert.equal(typeof final.completed_at, 'number');
    assert.deepEqual(final.output, [itemDone.item]);
    assert.deepEqual(final.usage, {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 15,
    });
    assert.deepEqual(final.tools, [{ type: 'function', name: 'weather', parameters: { type: 'object' }, description: null, strict: null }]);
    assert.deepEqual(responseResourceErrors(final), []);
    assert.deepEqual(sdkAccumulated(events).output, final.output);
  });

  it('streams tool calls: the item opens with empty arguments, argument deltas, done with name and arguments', () => {
    const events = run([
      { type: 'tool-call-start', id: 'c', callId: 'call_1', name: 'weather' },
      { type: 'tool-call-delta', id: 'c', delta: '{"city":' },
      { type: 'tool-call-delta', id: 'c', delta: '"Paris"}' },
      { type: 'tool-call-end', id: 'c' },
      { type: 'finish', finishReason: 'tool_calls', usage: USAGE },
    ]);
    assert.deepEqual(types(events).slice(2), [
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    assertWellFormed(events);
    const [added, delta, , done, itemDone] = events.slice(2);
    assert.ok(added?.type === 'response.output_item.added');
    const id = added.item.id as string;
    assert.match(id, /^fc_/);
    assert.deepEqual(added.item, { id, type: 'function_call', status: 'in_progress', call_id: 'call_1', name: 'weather', arguments: '' });
    assert.deepEqual(delta, { type: 'response.function_call_arguments.delta', sequence_number: 3, item_id: id, output_index: 0, delta: '{"city":' });
    assert.deepEqual(done, {
      type: 'response.function_call_arguments.done',
      sequence_number: 5,
      item_id: id,
      output_index: 0,
      name: 'weather',
      arguments: '{"city":"Paris"}',
    });
    assert.ok(itemDone?.type === 'response.output_item.done');
    assert.deepEqual(itemDone.item, { id, type: 'function_call', status: 'completed', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' });
    assert.deepEqual(sdkAccumulated(events).output, terminalResponse(events).output);
  });

  it('streams reasoning as summary events; the done item carries the signature in encrypted_content; reasoning without text has no summary part', () => {
    const events = run([
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'Think ' },
      { type: 'reasoning-delta', id: 'r', delta: 'hard.' },
      { type: 'reasoning-end', id: 'r', signature: 'sig-1' },
      { type: 'reasoning-start', id: 'hidden', redactedData: 'opaque' },
      { type: 'reasoning-end', id: 'hidden' },
      ...textParts('t', 'Done.'),
      { type: 'finish', finishReason: 'stop', usage: USAGE },
    ]);
    assert.deepEqual(types(events).slice(2, 12), [
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.output_item.done',
      'response.output_item.added',
    ]);
    assertWellFormed(events);
    const added = events[2];
    assert.ok(added?.type === 'response.output_item.added');
    const id = added.item.id as string;
    assert.deepEqual(added.item, { id, type: 'reasoning', summary: [] });
    assert.deepEqual(events[3], {
      type: 'response.reasoning_summary_part.added',
      sequence_number: 3,
      item_id: id,
      output_index: 0,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
    assert.deepEqual(events[4], {
      type: 'response.reasoning_summary_text.delta',
      sequence_number: 4,
      item_id: id,
      output_index: 0,
      summary_index: 0,
      delta: 'Think ',
    });
    assert.deepEqual(events[6], {
      type: 'response.reasoning_summary_text.done',
      sequence_number: 6,
      item_id: id,
      output_index: 0,
      summary_index: 0,
      text: 'Think hard.',
    });
    const done = events[8];
    assert.ok(done?.type === 'response.output_item.done' && done.item.type === 'reasoning');
    assert.deepEqual(done.item.summary, [{ type: 'summary_text', text: 'Think hard.' }]);
    assert.match(String(done.item['encrypted_content']), /^agw-reasoning-v1:/);
    const hidden = events[10];
    assert.ok(hidden?.type === 'response.output_item.done' && hidden.item.type === 'reasoning');
    assert.deepEqual(hidden.item.summary, []);
    assert.equal(hidden.output_index, 1);
    assert.deepEqual(sdkAccumulated(events).output, terminalResponse(events).output);
  });

  it('keeps interleaved blocks apart: output indexes in the order blocks opened, each delta on its own item', () => {
    const events = run([
      { type: 'text-start', id: 'a' },
      { type: 'tool-call-start', id: 'b', callId: 'call_b', name: 'weather' },
      { type: 'text-delta', id: 'a', delta: 'one ' },
      { type: 'tool-call-delta', id: 'b', delta: '{"x":' },
      { type: 'tool-call-start', id: 'c', callId: 'call_c', name: 'weather' },
      { type: 'tool-call-delta', id: 'c', delta: '{}' },
      { type: 'tool-call-end', id: 'c' },
      { type: 'text-delta', id: 'a', delta: 'two' },
      { type: 'tool-call-delta', id: 'b', delta: '1}' },
      { type: 'tool-call-end', id: 'b' },
      { type: 'text-end', id: 'a' },
      { type: 'finish', finishReason: 'tool_calls', usage: USAGE },
    ]);
    assertWellFormed(events);
    const final = terminalResponse(events);
    assert.deepEqual(
      final.output.map((item) => [item.type, item.type === 'function_call' ? item.call_id : null, item.type === 'function_call' ? item.arguments : null]),
      [
        ['message', null, null],
        ['function_call', 'call_b', '{"x":1}'],
        ['function_call', 'call_c', '{}'],
      ],
    );
    assert.equal(messageText(final.output[0]), 'one two');
    for (const event of events) {
      if (!('item_id' in event)) continue;
      const item = final.output[event.output_index];
      assert.equal(event.item_id, item?.id, `${event.type} #${event.sequence_number} names the item at its output_index`);
    }
    assert.deepEqual(sdkAccumulated(events).output, final.output);
  });

  it('opens a text block a provider delta-ed without starting it, skips empty deltas, and ignores argument deltas of a call never started', () => {
    const events = run([
      { type: 'text-delta', id: 't', delta: 'no start' },
      { type: 'text-delta', id: 't', delta: '' },
      { type: 'tool-call-delta', id: 'ghost', delta: '{"lost":true}' },
      { type: 'tool-call-start', id: 'c', callId: 'call_1', name: 'weather' },
      { type: 'tool-call-delta', id: 'c', delta: '' },
      { type: 'tool-call-end', id: 'c' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: 'stop', usage: USAGE },
    ]);
    assertWellFormed(events);
    assert.deepEqual(types(events).slice(2, 6), [
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_item.added',
    ]);
    assert.equal(events.filter((event) => event.type === 'response.output_text.delta').length, 1);
    assert.equal(events.filter((event) => event.type === 'response.function_call_arguments.delta').length, 0);
    assert.deepEqual(
      terminalResponse(events).output.map((item) => [item.type, messageText(item)]),
      [
        ['message', 'no start'],
        ['function_call', null],
      ],
    );
  });

  it('shows native Responses items as added and done; native parts of another format have no item', () => {
    const item = { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } };
    const events = run([
      { type: 'native', format: 'responses', value: item },
      { type: 'native', format: 'messages', value: { type: 'server_tool_use', id: 'srvtoolu_1' } },
      ...textParts('t', 'x'),
      { type: 'finish', finishReason: 'stop', usage: USAGE },
    ]);
    assert.deepEqual(events[2], { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item });
    assert.deepEqual(events[3], { type: 'response.output_item.done', sequence_number: 3, output_index: 0, item });
    assert.equal(events[4]?.type, 'response.output_item.added');
    assert.deepEqual(
      terminalResponse(events).output.map((entry) => entry.type),
      ['web_search_call', 'message'],
    );
    events.forEach((event, i) => assert.equal(event.sequence_number, i));
  });

  it('ends incomplete on the token limit and on a content filter', () => {
    for (const [finishReason, reason] of [
      ['length', 'max_output_tokens'],
      ['content_filter', 'content_filter'],
    ] as const) {
      const events = run([...textParts('t', 'cut'), { type: 'finish', finishReason, usage: USAGE }]);
      assertWellFormed(events);
      assert.equal(events.at(-1)?.type, 'response.incomplete');
      const final = terminalResponse(events);
      assert.equal(final.status, 'incomplete');
      assert.deepEqual(final.incomplete_details, { reason });
      assert.equal(final.completed_at, null);
    }
  });

  it('streams a refusal block as a message with a refusal part and refusal events; a refusal is never cut', () => {
    const events = run(
      [
        { type: 'start', id: 'up-1', model: 'upstream-model', created: 1 },
        ...textParts('t', 'Hello..'),
        { type: 'text-start', id: 'r', refusal: true },
        { type: 'text-delta', id: 'r', delta: 'I cannot ' },
        { type: 'text-delta', id: 'r', delta: 'help.' },
        { type: 'text-end', id: 'r' },
        { type: 'finish', finishReason: 'content_filter', usage: USAGE },
      ],
      new ResponsesEventStream({ request: REQUEST, marksCutItems: true }),
    );
    assertWellFormed(events);
    assert.deepEqual(types(events).slice(8), [
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.delta',
      'response.refusal.delta',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.incomplete',
    ]);
    const refusal = { type: 'refusal', refusal: 'I cannot help.' };
    const [added, , , done, partDone] = events.slice(9);
    assert.ok(added?.type === 'response.content_part.added' && partDone?.type === 'response.content_part.done');
    assert.deepEqual([added.content_index, added.part], [0, { type: 'refusal', refusal: '' }]);
    assert.deepEqual(partDone.part, refusal);
    assert.ok(done?.type === 'response.refusal.done');
    assert.equal(done.refusal, 'I cannot help.');
    const final = terminalResponse(events);
    assert.deepEqual(
      final.output.map((item) => [statusOf(item), (item as MessageItem).content]),
      [
        ['completed', [{ type: 'output_text', text: 'Hello..', annotations: [], logprobs: [] }]],
        ['completed', [refusal]],
      ],
    );
    // The OpenAI SDK's accumulator (which throws on a refusal delta into anything but a refusal part) agrees.
    const accumulated = sdkAccumulated(events).output.at(-1);
    assert.deepEqual(accumulated?.type === 'message' ? accumulated.content : null, [refusal]);
  });

  it('with marksCutItems, done the message or call generation stopped in as incomplete, the items before it completed', () => {
    const cutStream = (): ResponsesEventStream => new ResponsesEventStream({ request: REQUEST, marksCutItems: true });
    const itemDone = (events: ResponsesEvent[]): OutputItem[] => events.flatMap((event) => (event.type === 'response.output_item.done' ? [event.item] : []));
    for (const [finishReason, reason] of [
      ['length', 'max_output_tokens'],
      ['content_filter', 'content_filter'],
    ] as const) {
      // Text, then a call cut mid-arguments: the provider closes the call before it says why it stopped.
      const events = run(
        [
          ...textParts('t', 'Let me check.'),
          { type: 'tool-call-start', id: 'c', callId: 'call_1', name: 'weather' },
          { type: 'tool-call-delta', id: 'c', delta: '{"city":"Par' },
          { type: 'tool-call-end', id: 'c' },
          { type: 'finish', finishReason, usage: USAGE },
        ],
        cutStream(),
      );
      assertWellFormed(events);
      assert.deepEqual(types(events).slice(-4), [
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.incomplete',
      ]);
      assert.deepEqual(itemDone(events).map(statusOf), ['completed', 'incomplete']);
      const final = terminalResponse(events);
      assert.deepEqual(final.incomplete_details, { reason });
      assert.deepEqual(final.output.map(statusOf), ['completed', 'incomplete']);
      assert.deepEqual(
        sdkAccumulated(events).output.map((item) => ('status' in item ? item.status : undefined)),
        ['completed', 'incomplete'],
        'what the OpenAI SDK accumulates',
      );
    }
    // A message cut mid-text, and one still open when the finish comes.
    for (const parts of [
      textParts('t', 'Hello wor'),
      [
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hello wor' },
      ] as StreamPart[],
    ]) {
      const events = run([...parts, { type: 'finish', finishReason: 'length', usage: USAGE }], cutStream());
      assertWellFormed(events);
      assert.deepEqual(itemDone(events).map(statusOf), ['incomplete']);
      assert.deepEqual(terminalResponse(events).output.map(statusOf), ['incomplete']);
    }
    // Finished normally, or failed: the held item is done as completed, in the same order as without holding.
    const completed = run([...textParts('t', 'Hi'), { type: 'finish', finishReason: 'stop', usage: USAGE }], cutStream());
    assert.deepEqual(types(completed), types(run([...textParts('t', 'Hi'), { type: 'finish', finishReason: 'stop', usage: USAGE }])));
    assert.deepEqual(itemDone(completed).map(statusOf), ['completed']);
    const failed = run([...textParts('t', 'Hi'), { type: 'error', error: new Error('cut') }], cutStream());
    assertWellFormed(failed);
    assert.deepEqual(types(failed).slice(-3), ['response.output_item.done', 'error', 'response.failed']);
    assert.deepEqual(terminalResponse(failed).output.map(statusOf), ['completed']);
    const ended = run([...textParts('t', 'Hi')], cutStream());
    assert.deepEqual(types(ended).slice(-3), ['response.output_item.done', 'error', 'response.failed']);
  });

  it('closes blocks still open when the finish part comes, before the terminal event', () => {
    const events = run([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'partial' },
      { type: 'tool-call-start', id: 'c', callId: 'call_1', name: 'weather' },
      { type: 'finish', finishReason: 'stop', usage: USAGE },
    ]);
    assertWellFormed(events);
    assert.deepEqual(types(events).slice(-6), [
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    assert.deepEqual(terminalResponse(events).output.map(statusOf), ['completed', 'completed']);
  });

  it('fails mid-stream on an error part: an error event in both shapes, then response.failed with the output so far; nothing after', () => {
    const stream = new ResponsesEventStream({ request: REQUEST });
    const events = run(
      [
        ...textParts('t', 'done text'),
        { type: 'text-start', id: 'u' },
        { type: 'text-delta', id: 'u', delta: 'half' },
        { type: 'error', error: new Error('socket hang up: internal detail') },
        { type: 'text-delta', id: 'u', delta: 'more' },
        { type: 'finish', finishReason: 'stop', usage: USAGE },
      ],
      stream,
    );
    assertWellFormed(events);
    assert.deepEqual(types(events).slice(-2), ['error', 'response.failed']);
    const error = events.at(-2);
    assert.deepEqual(error, {
      type: 'error',
      sequence_number: events.length - 2,
      code: 'stream_error',
      message: 'The model stream failed before the response was complete.',
      param: null,
      error: { type: 'server_error', code: 'stream_error', message: 'The model stream failed before the response was complete.', param: null },
    });
    const final = terminalResponse(events);
    assert.equal(final.status, 'failed');
    assert.deepEqual(final.error, { code: 'stream_error', message: 'The model stream failed before the response was complete.' });
    assert.deepEqual(
      final.output.map((item) => [statusOf(item), messageText(item)]),
      [
        ['completed', 'done text'],
        ['incomplete', 'half'],
      ],
    );
    assert.deepEqual(responseResourceErrors(final), []);
    assert.deepEqual(stream.push({ type: 'text-delta', id: 'u', delta: 'late' }), []);
    assert.deepEqual(stream.fail(new Error('again')), []);
    assert.deepEqual(stream.finish(), []);
    assert.equal(stream.finished, true);
  });

  it('reports a GatewayError with its own type, code and param', () => {
    const stream = new ResponsesEventStream({ request: REQUEST });
    stream.start();
    const [error, failed] = stream.fail(new GatewayError('upstream_timeout', 'The upstream did not answer in time.', { param: 'model' }));
    assert.ok(error?.type === 'error');
    assert.deepEqual(error.error, { type: 'upstream_error', code: 'upstream_timeout', message: 'The upstream did not answer in time.', param: 'model' });
    assert.equal(error.code, 'upstream_timeout');
    assert.ok(failed?.type === 'response.failed');
    assert.deepEqual(failed.response.error, { code: 'upstream_timeout', message: 'The upstream did not answer in time.' });
  });

  it('fails when the source ends without a finish part (an upstream cut between chunks)', () => {
    const events = run([...textParts('t', 'abc')]);
    assertWellFormed(events);
    assert.deepEqual(types(events).slice(-2), ['error', 'response.failed']);
    const error = events.at(-2);
    assert.ok(error?.type === 'error');
    assert.equal(error.error.code, 'stream_error');
    assert.equal(error.error.type, 'server_error');
    assert.equal(statusOf(terminalResponse(events).output[0]), 'completed');
  });

  it('fails on a finish with reason error', () => {
    const events = run([...textParts('t', 'abc'), { type: 'finish', finishReason: 'error', usage: USAGE }]);
    assertWellFormed(events);
    assert.deepEqual(types(events).slice(-2), ['error', 'response.failed']);
    assert.deepEqual(terminalResponse(events).usage?.input_tokens, 10);
  });

  it('numbers from a start value, starts by itself when pushed first, and ignores a second start()', () => {
    const stream = new ResponsesEventStream({ request: REQUEST, startSequence: 42, id: 'resp_given' });
    const first = stream.push({ type: 'text-start', id: 't' });
    assert.deepEqual(types(first), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    assert.deepEqual(stream.start(), []);
    const rest = [...stream.push({ type: 'text-end', id: 't' }), ...stream.push({ type: 'finish', finishReason: 'stop', usage: USAGE }), ...stream.finish()];
    const events = [...first, ...rest];
    assertWellFormed(events, 42);
    assert.equal(stream.nextSequenceNumber, 42 + events.length);
    assert.equal(terminalResponse(events).id, 'resp_given');
    assert.equal(stream.id, 'resp_given');
  });

  it('gives a snapshot of the response at any time, which later events never change', () => {
    const stream = new ResponsesEventStream({ request: REQUEST, conversationId: 'conv_9' });
    const [created] = stream.start();
    stream.push({ type: 'text-start', id: 't' });
    stream.push({ type: 'text-delta', id: 't', delta: 'so far' });
    const snapshot = stream.response();
    assert.equal(snapshot.status, 'in_progress');
    assert.deepEqual(snapshot.conversation, { id: 'conv_9' });
    assert.deepEqual(
      snapshot.output.map((item) => [item.type, statusOf(item), messageText(item)]),
      [['message', 'in_progress', 'so far']],
    );
    assert.deepEqual(responseResourceErrors(snapshot), []);
    stream.push({ type: 'text-delta', id: 't', delta: ' and more' });
    stream.push({ type: 'text-end', id: 't' });
    stream.push({ type: 'finish', finishReason: 'stop', usage: USAGE });
    assert.ok(created?.type === 'response.created');
    assert.deepEqual(created.response.output, []);
    assert.equal(created.response.status, 'in_progress');
    assert.equal(messageText(snapshot.output[0]), 'so far');
    assert.equal(stream.response().status, 'completed');
  });

  describe('events(source)', () => {
    async function collect(source: AsyncIterable<ResponsesEvent>): Promise<ResponsesEvent[]> {
      const out: ResponsesEvent[] = [];
      for await (const event of source) out.push(event);
      return out;
    }

    it('runs a whole source and turns a thrown error into error + response.failed', async () => {
      async function* source(): AsyncGenerator<StreamPart> {
        yield { type: 'text-start', id: 't' };
        yield { type: 'text-delta', id: 't', delta: 'a' };
        throw new Error('ECONNRESET');
      }
      const events = await collect(new ResponsesEventStream({ request: REQUEST }).events(source()));
      assertWellFormed(events);
      assert.deepEqual(types(events).slice(-2), ['error', 'response.failed']);
    });

    it('releases the source after the finish part and when the consumer stops reading', async () => {
      let released = 0;
      async function* source(): AsyncGenerator<StreamPart> {
        try {
          yield* textParts('t', 'a', 'b');
          yield { type: 'finish', finishReason: 'stop', usage: USAGE };
          yield { type: 'text-start', id: 'after' };
          await new Promise(() => undefined); // an upstream that never closes
        } finally {
          released++;
        }
      }
      const events = await collect(new ResponsesEventStream({ request: REQUEST }).events(source()));
      assertWellFormed(events);
      assert.equal(events.at(-1)?.type, 'response.completed');
      assert.equal(released, 1);

      const reader = new ResponsesEventStream({ request: REQUEST }).events(source());
      for await (const event of reader) if (event.type === 'response.output_text.delta') break;
      assert.equal(released, 2);
    });
  });
});
