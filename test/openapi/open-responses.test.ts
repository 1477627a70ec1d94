// Our Responses objects and stream events are valid by the public Open Responses specification as well
// as by our own document: hand-written samples of every type we emit pass both checks of
// test/support/open-responses.ts, broken ones fail both, and our schemas require at least what the
// spec requires (so an object valid by ours cannot miss a field the spec needs).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  assertOpenResponsesEvent,
  assertOpenResponsesObject,
  assertOurEvent,
  assertOurResponseObject,
  assertOurSchema,
  responseEventTypes,
} from '../support/open-responses';
import { loadGeneratedDocument } from '../helpers/openapi-document';

const SPEC_FILE = path.resolve(__dirname, '../fixtures/open-responses/openapi.json');
/** sha256 of the vendored file, as recorded in its README: the copy stays verbatim. */
const SPEC_SHA256 = '1f469fc044bc3c0ee9bb8210b76435ce2386ed792c16863f8dc9bd6070b87f6a';
/** The event types of our own extension (absent from the spec), named like the mcp_call ones. */
const EXTENSION_EVENTS = [
  'response.mcp_call_arguments.delta',
  'response.mcp_call_arguments.done',
  'response.svc_call_arguments.delta',
  'response.svc_call_arguments.done',
];

type Json = Record<string, unknown>;

const message = (status: 'in_progress' | 'completed', text: string): Json => ({
  type: 'message',
  id: 'msg_1',
  status,
  role: 'assistant',
  content:
    status === 'in_progress'
      ? []
      : [
          {
            type: 'output_text',
            text,
            annotations: [{ type: 'url_citation', url: 'https://example.com/tides', start_index: 0, end_index: 5, title: 'Tides' }],
            logprobs: [{ token: 'Tides', logprob: -0.1, bytes: [84, 105, 100, 101, 115], top_logprobs: [{ token: 'Tides', logprob: -0.1, bytes: [84] }] }],
          },
        ],
});
const functionCall = (status: 'in_progress' | 'completed', args: string): Json => ({
  type: 'function_call',
  id: 'fc_1',
  call_id: 'call_1',
  name: 'get_weather',
  arguments: args,
  status,
});
const reasoning = (summary: string): Json => ({
  type: 'reasoning',
  id: 'rs_1',
  summary: summary === '' ? [] : [{ type: 'summary_text', text: summary }],
  content: [{ type: 'reasoning_text', text: 'The user asks about tides.' }],
  encrypted_content: 'gAAAAB...',
  status: 'completed',
});
const svcCall = (status: 'in_progress' | 'completed'): Json => ({
  type: 'svc_call',
  id: 'svc_1',
  name: 'svc_web_search',
  arguments: '{"query":"tides"}',
  output: status === 'completed' ? '3 results' : null,
  error: null,
  status,
});
const mcpCall = (status: 'in_progress' | 'completed'): Json => ({
  type: 'mcp_call',
  id: 'mcp_1',
  server_label: 'docs',
  name: 'search',
  arguments: '{"q":"tides"}',
  output: status === 'completed' ? 'found' : null,
  error: null,
  status,
});

/** A response as the gateway returns it, every field present. */
function response(overrides: Json = {}): Json {
  return {
    id: 'resp_1',
    object: 'response',
    created_at: 1_741_476_777,
    completed_at: 1_741_476_778,
    status: 'completed',
    incomplete_details: null,
    model: 'demo',
    previous_response_id: null,
    instructions: 'Be brief.',
    output: [reasoning('Looked up the tides.'), functionCall('completed', '{"city":"Brest"}'), message('completed', 'Tides are high at noon.')],
    error: null,
    tools: [
      {
        type: 'function',
        name: 'get_weather',
        description: 'Weather of a city.',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: true,
      },
    ],
    tool_choice: 'auto',
    truncation: 'disabled',
    parallel_tool_calls: true,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    top_p: 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    temperature: 1,
    reasoning: { effort: 'medium', summary: 'auto' },
    usage: {
      input_tokens: 328,
      output_tokens: 52,
      total_tokens: 380,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 12 },
    },
    max_output_tokens: null,
    max_tool_calls: null,
    store: true,
    background: false,
    service_tier: 'default',
    metadata: { ticket: 'T-1' },
    safety_identifier: null,
    prompt_cache_key: null,
    conversation: { id: 'conv_1' },
    ...overrides,
  };
}

const inProgress = response({ status: 'in_progress', completed_at: null, output: [], usage: null });

/** One sample of every event type of our document, as the gateway emits it. */
const EVENTS: Record<string, Json> = {
  'response.created': { response: inProgress },
  'response.queued': { response: response({ status: 'queued', completed_at: null, output: [], usage: null }) },
  'response.in_progress': { response: inProgress },
  'response.output_item.added': { output_index: 0, item: message('in_progress', '') },
  'response.content_part.added': { item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } },
  'response.output_text.delta': { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Tides', logprobs: [], obfuscation: 'aZ3' },
  'response.output_text.annotation.added': {
    item_id: 'msg_1',
    output_index: 0,
    content_index: 0,
    annotation_index: 0,
    annotation: { type: 'url_citation', url: 'https://example.com/tides', start_index: 0, end_index: 5, title: 'Tides' },
  },
  'response.output_text.done': { item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Tides are high at noon.' },
  'response.content_part.done': {
    item_id: 'msg_1',
    output_index: 0,
    content_index: 0,
    part: { type: 'output_text', text: 'Tides are high at noon.', annotations: [] },
  },
  'response.output_item.done': { output_index: 0, item: message('completed', 'Tides are high at noon.') },
  'response.refusal.delta': { item_id: 'msg_2', output_index: 1, content_index: 0, delta: 'I cannot' },
  'response.refusal.done': { item_id: 'msg_2', output_index: 1, content_index: 0, refusal: 'I cannot help with that.' },
  'response.function_call_arguments.delta': { item_id: 'fc_1', output_index: 1, delta: '{"city":', obfuscation: 'x' },
  'response.function_call_arguments.done': { item_id: 'fc_1', output_index: 1, arguments: '{"city":"Brest"}' },
  'response.mcp_call_arguments.delta': { item_id: 'mcp_1', output_index: 2, delta: '{"q":' },
  'response.mcp_call_arguments.done': { item_id: 'mcp_1', output_index: 2, arguments: '{"q":"tides"}' },
  'response.svc_call_arguments.delta': { item_id: 'svc_1', output_index: 3, delta: '{"query":' },
  'response.svc_call_arguments.done': { item_id: 'svc_1', output_index: 3, arguments: '{"query":"tides"}' },
  'response.reasoning_summary_part.added': { item_id: 'rs_1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } },
  'response.reasoning_summary_text.delta': { item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Looked up' },
  'response.reasoning_summary_text.done': { item_id: 'rs_1', output_index: 0, summary_index: 0, text: 'Looked up the tides.' },
  'response.reasoning_summary_part.done': { item_id: 'rs_1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: 'Looked up the tides.' } },
  'response.completed': { response: response() },
  'response.incomplete': {
    response: response({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      max_output_tokens: 16,
      output: [{ ...message('completed', 'Tides are'), status: 'incomplete' }],
    }),
  },
  error: { error: { message: 'The upstream connection was lost.', type: 'server_error', code: 'stream_error', param: null } },
  'response.failed': {
    response: response({ status: 'failed', completed_at: null, output: [], error: { code: 'stream_error', message: 'The upstream connection was lost.' } }),
  },
};

const events = (): Json[] => Object.entries(EVENTS).map(([type, payload], n) => ({ type, sequence_number: n, ...payload }));
const event = (type: string, changes: Json = {}): Json => ({ ...events().find((e) => e['type'] === type)!, ...changes });

/** Asserts that `check` throws and that its message names every fragment. */
function fails(check: () => void, ...fragments: string[]): void {
  assert.throws(check, (err: unknown) => {
    assert.ok(err instanceof Error);
    for (const fragment of fragments) assert.ok(err.message.includes(fragment), `"${fragment}" in:\n${err.message}`);
    return true;
  });
}

describe('Open Responses compatibility of our Responses objects and events', function () {
  this.timeout(30_000);

  it('vendors the Open Responses document verbatim', () => {
    const hash = createHash('sha256').update(readFileSync(SPEC_FILE)).digest('hex');
    assert.equal(hash, SPEC_SHA256, 'test/fixtures/open-responses/openapi.json was changed; replace it whole and update its README');
  });

  it('passes a completed response with reasoning, function_call and message output, by both', () => {
    assertOpenResponsesObject(response());
    assertOurResponseObject(response());
  });

  it('passes responses in every status, with every field in its other forms, by both', () => {
    const variants = [
      inProgress,
      response({ status: 'queued', completed_at: null, output: [], usage: null, background: true }),
      response({ status: 'cancelled', completed_at: null }),
      response({ status: 'failed', error: { code: 'server_error', message: 'The model failed.' } }),
      response({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, max_output_tokens: 16 }),
      response({ conversation: null, store: false, metadata: {}, instructions: null, previous_response_id: 'resp_0', reasoning: null, tools: [] }),
      response({
        tool_choice: { type: 'function', name: 'get_weather' },
        text: { format: { type: 'json_schema', name: 'answer', description: null, schema: { type: 'object' }, strict: true } },
        reasoning: { effort: 'minimal', summary: null },
        prompt_cache_key: 'k',
        safety_identifier: 'user-1',
        max_tool_calls: 4,
      }),
      response({
        tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'get_weather' }] },
        text: { format: { type: 'json_object' } },
      }),
    ];
    for (const variant of variants) {
      assertOpenResponsesObject(variant);
      assertOurResponseObject(variant);
    }
  });

  it('passes server-side items, hosted tools and hosted tool choices: the spec checks the rest, ours the extensions', () => {
    const serverSide = response({
      output: [
        mcpCall('completed'),
        svcCall('completed'),
        { type: 'shell_call', id: 'sh_1', call_id: 'call_sh', action: { commands: ['ls'], timeout_ms: 1000, max_output_length: null }, status: 'completed' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'tides', sources: [] } },
        {
          ...message('completed', 'Found.'),
          content: [{ type: 'output_text', text: 'Found.', annotations: [{ type: 'file_citation', file_id: 'file-1', index: 0 }] }],
        },
      ],
      tools: [
        { type: 'svc_web_search' },
        { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com' },
        { type: 'function', name: 'f', description: null, parameters: null, strict: null },
      ],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'mcp', server_label: 'docs' }] },
    });
    assertOpenResponsesObject(serverSide);
    assertOurResponseObject(serverSide);
    for (const item of [mcpCall('in_progress'), svcCall('in_progress')]) {
      for (const type of ['response.output_item.added', 'response.output_item.done']) {
        assertOpenResponsesEvent(event(type, { item }));
        assertOurEvent(event(type, { item }));
      }
    }
    assertOpenResponsesObject(response({ tool_choice: { type: 'svc_web_search' } }));
    assertOurResponseObject(response({ tool_choice: { type: 'svc_web_search' } }));
  });

  it('has a sample of every event type of our document, and each passes both', () => {
    const types = responseEventTypes();
    assert.deepEqual(Object.keys(EVENTS).sort(), types.ours);
    assert.deepEqual(
      types.ours.filter((t) => !types.spec.includes(t)),
      EXTENSION_EVENTS,
      'our only event types outside the spec are the mcp_call / svc_call argument events',
    );
    for (const sample of events()) {
      assertOpenResponsesEvent(sample);
      assertOurEvent(sample);
      // The union as the conformance test compiles it (Ajv's discriminator on `type`).
      assertOurSchema('ResponseStreamEvent', sample);
    }
  });

  it('requires in our schemas every field the spec requires, for the response and each event type it defines', () => {
    const spec = JSON.parse(readFileSync(SPEC_FILE, 'utf8')) as { components: { schemas: Record<string, Json> } };
    const ours = loadGeneratedDocument().components?.schemas as Record<string, Json>;
    const required = (schema: Json | undefined) => (schema?.['required'] as string[] | undefined) ?? [];
    const missing = (mine: Json | undefined, theirs: Json | undefined) => required(theirs).filter((field) => !required(mine).includes(field));
    // Our schema -> the spec's, for every object we emit whose type the spec defines.
    const pairs: [string, string][] = [
      ['Response', 'ResponseResource'],
      ['ResponseOutputMessage', 'Message'],
      ['ResponseFunctionCall', 'FunctionCall'],
      ['ResponseReasoning', 'ReasoningBody'],
      ['ResponseOutputText', 'OutputTextContent'],
      ['ResponseRefusal', 'RefusalContent'],
      ['ResponseSummaryText', 'SummaryTextContent'],
      ['ResponseReasoningText', 'ReasoningTextContent'],
      ['ResponseLogProb', 'LogProb'],
      ['ResponseTopLogProb', 'TopLogProb'],
      ['ResponseUsage', 'Usage'],
      ['ResponseError', 'Error'],
      ['ResponseFunctionToolEcho', 'FunctionTool'],
      ['ResponseTextEcho', 'TextField'],
      ['ResponseReasoningEcho', 'Reasoning'],
    ];
    for (const [mine, theirs] of pairs) {
      assert.ok(ours[mine] && spec.components.schemas[theirs], `${mine} / ${theirs} exist`);
      assert.deepEqual(missing(ours[mine], spec.components.schemas[theirs]), [], `${mine} requires what ${theirs} requires`);
    }
    const errorEvent = (ours['ResponseErrorEvent']!['properties'] as Record<string, Json>)['error'];
    assert.deepEqual(missing(errorEvent, spec.components.schemas['ErrorPayload']), [], 'ResponseErrorEvent.error requires what ErrorPayload requires');
    const byType = (schemas: Record<string, Json>) =>
      new Map(
        Object.values(schemas)
          .map((s) => [((s['properties'] as Record<string, Json> | undefined)?.['type'] ?? {}) as Json, s] as const)
          .map(([type, s]) => [String(type['const'] ?? (type['enum'] as unknown[] | undefined)?.[0] ?? ''), s] as const)
          .filter(([type, s]) => type !== '' && required(s).includes('sequence_number')),
      );
    const specEvents = byType(spec.components.schemas);
    const ourEvents = byType(ours);
    for (const [type, theirs] of specEvents) {
      if (!ourEvents.has(type)) continue;
      assert.deepEqual(missing(ourEvents.get(type), theirs), [], type);
    }
  });

  it('fails an event without sequence_number, by both', () => {
    for (const type of ['response.output_text.delta', 'response.completed', 'error', 'response.svc_call_arguments.delta']) {
      const broken = event(type);
      delete broken['sequence_number'];
      fails(() => assertOpenResponsesEvent(broken), "must have 'sequence_number'");
      fails(() => assertOurEvent(broken), "must have 'sequence_number'");
    }
  });

  it('fails a delta of the wrong type, by both', () => {
    for (const type of [
      'response.output_text.delta',
      'response.function_call_arguments.delta',
      'response.reasoning_summary_text.delta',
      'response.mcp_call_arguments.delta',
    ]) {
      const broken = event(type, { delta: 42 });
      fails(() => assertOpenResponsesEvent(broken), '/delta: must be string (is 42)');
      fails(() => assertOurEvent(broken), '/delta: must be string (is 42)');
    }
  });

  it('fails an unknown status, by both, also inside an event', () => {
    fails(() => assertOpenResponsesObject(response({ status: 'done' })), '/status', '"done"');
    fails(() => assertOurResponseObject(response({ status: 'done' })), '/status', '"done"');
    const broken = event('response.completed', { response: response({ status: 'done' }) });
    fails(() => assertOpenResponsesEvent(broken), '/response/status');
    fails(() => assertOurEvent(broken), '/response/status');
  });

  it('fails broken objects by both, naming the place: a missing spec field, a bad part, a bad error event', () => {
    const withoutUsage = response();
    delete withoutUsage['usage'];
    fails(() => assertOpenResponsesObject(withoutUsage), "(root): must have 'usage'");
    fails(() => assertOurResponseObject(withoutUsage), "(root): must have 'usage'");
    const noAnnotations = response({ output: [{ ...message('completed', 'x'), content: [{ type: 'output_text', text: 'x' }] }] });
    fails(() => assertOpenResponsesObject(noAnnotations), "/output/0/content/0: must have 'annotations'");
    fails(() => assertOurResponseObject(noAnnotations), "/output/0/content/0: must have 'annotations'");
    const flatError = { type: 'error', sequence_number: 3, code: 'stream_error', message: 'lost' };
    fails(() => assertOpenResponsesEvent(flatError), "must have 'error'");
    fails(() => assertOurEvent(flatError), "must have 'error'");
    const noParam = event('error', { error: { message: 'lost', type: 'server_error', code: 'stream_error' } });
    fails(() => assertOpenResponsesEvent(noParam), "/error: must have 'param'");
    fails(() => assertOurEvent(noParam), "/error: must have 'param'");
  });

  it('checks extensions against our schema: a broken svc_call item or extension event fails, an unknown event type fails', () => {
    const { status: _status, ...noStatus } = svcCall('completed');
    fails(() => assertOpenResponsesObject(response({ output: [noStatus] })), '/output/0', "must have 'status'");
    fails(() => assertOpenResponsesEvent(event('response.output_item.done', { item: noStatus })), '/item', "must have 'status'");
    const { item_id: _itemId, ...noItemId } = event('response.svc_call_arguments.delta');
    fails(() => assertOpenResponsesEvent(noItemId), "must have 'item_id'");
    fails(
      () => assertOpenResponsesObject(response({ tools: [{ type: 'mcp', server_url: 'https://mcp.example.com' }] })),
      '/tools/0',
      "must have 'server_label'",
    );
    fails(() => assertOpenResponsesEvent({ type: 'response.teleported', sequence_number: 1 }), "'response.teleported' is an event type of neither");
    fails(() => assertOurEvent({ type: 'response.teleported', sequence_number: 1 }), "'response.teleported' is not an event type");
  });

  it('checks the input-items list against our schema', () => {
    assertOurSchema('ResponseInputItemList', {
      object: 'list',
      data: [
        {
          id: 'msg_0',
          type: 'message',
          role: 'user',
          status: 'completed',
          content: [
            { type: 'input_text', text: 'Tides?' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' },
          ],
        },
      ],
      has_more: false,
      first_id: 'msg_0',
      last_id: 'msg_0',
    });
    assertOurSchema('ResponseInputItemList', { object: 'list', data: [], has_more: false, first_id: null, last_id: null });
    fails(() => assertOurSchema('ResponseInputItemList', { object: 'list', data: [], has_more: true, first_id: null, last_id: null }), '/has_more');
    fails(
      () =>
        assertOurSchema('ResponseInputItemList', {
          object: 'list',
          data: [{ id: 'm', type: 'message', role: 'user', content: [] }],
          has_more: false,
          first_id: 'm',
          last_id: 'm',
        }),
      "/data/0: must have 'status'",
    );
  });
});
