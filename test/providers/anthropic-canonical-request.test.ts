// The anthropic provider's canonical interface (generate) against a fake Anthropic Messages API: the
// body the upstream received for every canonical shape, the options sent and not sent, the refusals,
// the upstream's errors, and the /v1/messages pass-through.
import assert from 'node:assert/strict';
import type { Message, ModelRequest, ToolDefinition } from '../../src/canonical/model';
import { GatewayError } from '../../src/http/errors';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider';
import { textMessage } from '../fixtures/upstreams/anthropic-events';
import { FAKE_ANTHROPIC_KEY, fakeAnthropicProviderConfig, useFakeAnthropicProvider } from '../fixtures/upstreams/anthropic-upstream';
import { modelRequest, user } from '../helpers/canonical';

const weatherTool: ToolDefinition = {
  kind: 'function',
  name: 'get_weather',
  description: 'Current weather',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};
const timeTool: ToolDefinition = { kind: 'function', name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } };

const isBadRequest =
  (param: string, message?: RegExp) =>
  (err: unknown): boolean =>
    err instanceof GatewayError &&
    err.status === 400 &&
    err.code === 'bad_request' &&
    err.param === param &&
    (message === undefined || message.test(err.message));

describe('providers/anthropic canonical request (generate against a fake Messages API)', () => {
  const anthropic = useFakeAnthropicProvider();
  beforeEach(() => anthropic.fake.requests.splice(0));

  /** Sends the request, answered with a plain text reply, and returns the body the upstream received. */
  async function sent(request: ModelRequest): Promise<Record<string, unknown>> {
    anthropic.fake.script({ kind: 'json', body: textMessage('ok') });
    await anthropic.provider.generate(request, 'claude-sonnet-4-20250514', {});
    const seen = anthropic.fake.requests.at(-1);
    assert.ok(seen, 'the upstream got a request');
    return seen.body;
  }

  describe('messages', () => {
    it('maps system/developer, multimodal content, tool calls, merged tool results and sampling fields; headers and model set', async () => {
      const request: ModelRequest = {
        model: 'claude-gw',
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'You are terse.' }] },
          { role: 'system', developer: true, content: [{ type: 'text', text: 'Use metric units.' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather here and there?' },
              { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/AAAA' } },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/map.png' }, detail: 'high' },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'tool-call', id: 'toolu_a', name: 'get_weather', arguments: '{"location":"Paris"}' },
              { type: 'tool-call', id: 'toolu_b', name: 'get_weather', arguments: '{"location":"Oslo"}' },
            ],
          },
          { role: 'tool', content: [{ type: 'tool-result', callId: 'toolu_a', output: '21C' }] },
          { role: 'tool', content: [{ type: 'tool-result', callId: 'toolu_b', output: [{ type: 'text', text: '-3C' }], isError: true }] },
        ],
        tools: [weatherTool],
        toolChoice: { kind: 'tool', name: 'get_weather' },
        options: { parallelToolCalls: false, stop: ['STOP'], temperature: 0.3, topP: 0.8, topK: 40, user: 'user-42' },
      };
      const frozen = structuredClone(request);
      anthropic.fake.script({ kind: 'json', body: textMessage('ok') });
      await anthropic.provider.generate(request, 'claude-sonnet-4-20250514', {});
      assert.deepEqual(request, frozen, 'the canonical request is not mutated (retries resend it)');

      const seen = anthropic.fake.requests[0];
      assert.ok(seen);
      assert.equal(seen.path, '/v1/messages');
      assert.equal(seen.headers['x-api-key'], FAKE_ANTHROPIC_KEY);
      assert.equal(seen.headers['anthropic-version'], '2023-06-01');
      assert.equal(seen.headers['accept'], 'application/json');
      assert.deepEqual(seen.body, {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather here and there?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/AAAA' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { location: 'Paris' } },
              { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: { location: 'Oslo' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_a', content: '21C' },
              { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: '-3C' }], is_error: true },
            ],
          },
        ],
        max_tokens: 4096,
        system: 'You are terse.\n\nUse metric units.',
        stop_sequences: ['STOP'],
        temperature: 0.3,
        top_p: 0.8,
        top_k: 40,
        metadata: { user_id: 'user-42' },
        tools: [
          {
            name: 'get_weather',
            input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
            description: 'Current weather',
          },
        ],
        tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
        model: 'claude-sonnet-4-20250514',
      });
    });

    it('merges a user message after tool results into one turn, tool results first, and sends one-text turns as strings', async () => {
      const body = await sent(
        modelRequest({
          messages: [
            user('first'),
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'calling' },
                { type: 'tool-call', id: 't1', name: 'f', arguments: '' },
              ],
            },
            { role: 'user', content: [{ type: 'text', text: 'also this' }] },
            { role: 'tool', content: [{ type: 'tool-result', callId: 't1', output: 'done' }] },
            { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
          ],
        }),
      );
      assert.deepEqual(body['messages'], [
        { role: 'user', content: 'first' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'calling' },
            { type: 'tool_use', id: 't1', name: 'f', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'done' },
            { type: 'text', text: 'also this' },
          ],
        },
        { role: 'assistant', content: 'ok' },
      ]);
    });

    it('keeps cache control: system as blocks, on text, image, tool results and tools', async () => {
      const ephemeral = { type: 'ephemeral' };
      const body = await sent(
        modelRequest({
          messages: [
            {
              role: 'system',
              content: [
                { type: 'text', text: 'Long instructions', cacheControl: ephemeral },
                { type: 'text', text: 'More' },
              ],
            },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Look', cacheControl: ephemeral },
                { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBO' }, cacheControl: { type: 'ephemeral', ttl: '1h' } },
              ],
            },
            { role: 'assistant', content: [{ type: 'tool-call', id: 't', name: 'get_weather', arguments: '{}' }] },
            { role: 'tool', content: [{ type: 'tool-result', callId: 't', output: 'sunny', cacheControl: ephemeral }] },
          ],
          tools: [{ ...weatherTool, cacheControl: ephemeral }],
        }),
      );
      assert.deepEqual(body['system'], [
        { type: 'text', text: 'Long instructions', cache_control: ephemeral },
        { type: 'text', text: 'More' },
      ]);
      assert.deepEqual(body['messages'], [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look', cache_control: ephemeral },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' }, cache_control: { type: 'ephemeral', ttl: '1h' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'get_weather', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'sunny', cache_control: ephemeral }] },
      ]);
      assert.deepEqual((body['tools'] as Record<string, unknown>[])[0]?.['cache_control'], ephemeral);
    });

    it('sends files and documents as document blocks: base64 PDF, text (decoded), PDF URL, image files as images, documents with title/context/citations', async () => {
      const body = await sent(
        modelRequest({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' }, filename: 'report.pdf' },
                { type: 'file', source: { kind: 'base64', mediaType: 'text/markdown', data: Buffer.from('# Notes').toString('base64') } },
                { type: 'file', source: { kind: 'url', url: 'https://example.com/paper.pdf', mediaType: 'application/pdf' } },
                { type: 'file', source: { kind: 'url', url: 'data:application/pdf;base64,JVBERi0y' } },
                { type: 'file', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBO' } },
                {
                  type: 'document',
                  source: { kind: 'text', mediaType: 'text/plain', data: 'The grass is green.' },
                  title: 'Facts',
                  context: 'From the almanac',
                  citations: { enabled: true },
                  cacheControl: { type: 'ephemeral' },
                },
                { type: 'text', text: 'Summarize.' },
              ],
            },
          ],
        }),
      );
      assert.deepEqual(body['messages'], [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'report.pdf' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: '# Notes' } },
            { type: 'document', source: { type: 'url', url: 'https://example.com/paper.pdf' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0y' } },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } },
            {
              type: 'document',
              source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' },
              title: 'Facts',
              context: 'From the almanac',
              citations: { enabled: true },
              cache_control: { type: 'ephemeral' },
            },
            { type: 'text', text: 'Summarize.' },
          ],
        },
      ]);
    });

    it('refuses what Anthropic cannot take with a 400 naming the part (nothing sent): file ids, other file types, non-PDF URL documents, non-http image URLs', async () => {
      const refusals: [Message, string, RegExp][] = [
        [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'read this' },
              { type: 'file', source: { kind: 'file-id', fileId: 'file-abc' } },
            ],
          },
          'messages[0].content[1]',
          /file id/,
        ],
        [{ role: 'user', content: [{ type: 'image', source: { kind: 'file-id', fileId: 'file-img' } }] }, 'messages[0].content[0]', /file id/],
        [
          { role: 'user', content: [{ type: 'file', source: { kind: 'base64', mediaType: 'application/msword', data: 'AAAA' } }] },
          'messages[0].content[0]',
          /application\/msword/,
        ],
        [
          { role: 'user', content: [{ type: 'file', source: { kind: 'url', url: 'https://example.com/a.docx', mediaType: 'application/msword' } }] },
          'messages[0].content[0]',
          /must be PDFs/,
        ],
        [{ role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'ftp://example.com/a.png' } }] }, 'messages[0].content[0]', /http\(s\)/],
      ];
      for (const [message, param, pattern] of refusals) {
        await assert.rejects(anthropic.provider.generate(modelRequest({ messages: [message] }), 'claude', {}), isBadRequest(param, pattern), param);
      }
      assert.equal(anthropic.fake.requests.length, 0);
    });

    it('refuses tool-call arguments that are not a JSON object with a 400 naming the field (nothing sent)', async () => {
      for (const args of ['not json', '[1,2]']) {
        await assert.rejects(
          anthropic.provider.generate(
            modelRequest({ messages: [user('q'), { role: 'assistant', content: [{ type: 'tool-call', id: 't', name: 'f', arguments: args }] }] }),
            'claude',
            {},
          ),
          isBadRequest('messages[1].content[0].arguments', /JSON object/),
        );
      }
      assert.equal(anthropic.fake.requests.length, 0);
    });

    it('sends reasoning back first in its turn as thinking (with signature) or redacted_thinking; reasoning Anthropic cannot verify is left out', async () => {
      const body = await sent(
        modelRequest({
          messages: [
            user('q'),
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'Let me look.' },
                { type: 'reasoning', text: 'The user wants weather.', signature: 'EqQBsig' },
                { type: 'reasoning', text: '', redactedData: 'EmwKAhgBEgy3va' },
                { type: 'reasoning', text: 'an OpenAI summary', encryptedContent: 'gAAAA' },
                { type: 'tool-call', id: 't1', name: 'get_weather', arguments: '{"location":"Rome"}' },
              ],
            },
            { role: 'tool', content: [{ type: 'tool-result', callId: 't1', output: 'sunny' }] },
          ],
        }),
      );
      assert.deepEqual((body['messages'] as unknown[])[1], {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'The user wants weather.', signature: 'EqQBsig' },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 't1', name: 'get_weather', input: { location: 'Rome' } },
        ],
      });
    });

    it('sends native parts of the Messages format verbatim (server tool blocks, search results), and refuses another format’s with a 400', async () => {
      const serverToolUse = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'rome weather' } };
      const searchResult = {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: [{ type: 'web_search_result', url: 'https://w.example', title: 'W' }],
      };
      const userSearchResult = { type: 'search_result', source: 'https://kb.example/1', title: 'KB', content: [{ type: 'text', text: 'fact' }] };
      const body = await sent(
        modelRequest({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'native', format: 'messages', value: userSearchResult },
                { type: 'text', text: 'and the weather?' },
              ],
            },
            {
              role: 'assistant',
              content: [
                { type: 'native', format: 'messages', value: serverToolUse },
                { type: 'native', format: 'messages', value: searchResult },
                { type: 'text', text: 'Sunny.' },
              ],
            },
            user('thanks'),
          ],
        }),
      );
      assert.deepEqual(body['messages'], [
        { role: 'user', content: [userSearchResult, { type: 'text', text: 'and the weather?' }] },
        { role: 'assistant', content: [serverToolUse, searchResult, { type: 'text', text: 'Sunny.' }] },
        { role: 'user', content: 'thanks' },
      ]);

      await assert.rejects(
        anthropic.provider.generate(
          modelRequest({ messages: [{ role: 'user', content: [{ type: 'native', format: 'responses', value: { type: 'input_audio' } }] }] }),
          'claude',
          {},
        ),
        isBadRequest('messages[0].content[0]', /responses content part "input_audio"/),
      );
      await assert.rejects(
        anthropic.provider.generate(
          modelRequest({ messages: [user('q'), { role: 'assistant', content: [{ type: 'native', format: 'chat', value: { type: 'audio' } }] }] }),
          'claude',
          {},
        ),
        isBadRequest('messages[1].content[0]'),
      );
      assert.equal(anthropic.fake.requests.length, 1);
    });
  });

  describe('tools and tool choice', () => {
    it('maps max tokens, stop arrays and every tool choice kind', async () => {
      const cases: [Partial<ModelRequest>, Record<string, unknown>][] = [
        [
          { toolChoice: { kind: 'auto' }, options: { maxOutputTokens: 77, stop: ['a', 'b'] } },
          { tool_choice: { type: 'auto' }, max_tokens: 77, stop_sequences: ['a', 'b'] },
        ],
        [
          { toolChoice: { kind: 'none' }, options: { maxOutputTokens: 12, parallelToolCalls: false } },
          { tool_choice: { type: 'none' }, max_tokens: 12 },
        ],
        [
          { toolChoice: { kind: 'required' }, options: {} },
          { tool_choice: { type: 'any' }, max_tokens: 4096 },
        ],
        [{ options: { parallelToolCalls: false } }, { tool_choice: { type: 'auto', disable_parallel_tool_use: true } }],
        [{ options: { stop: [] } }, { stop_sequences: undefined, tool_choice: undefined }],
      ];
      for (const [overrides, expected] of cases) {
        const body = await sent(modelRequest({ tools: [weatherTool], ...overrides }));
        for (const [key, value] of Object.entries(expected)) assert.deepEqual(body[key], value, `${JSON.stringify(overrides)}: ${key}`);
      }
    });

    it('an allowed-tools choice sends only the allowed tools’ definitions, with auto or any', async () => {
      const auto = await sent(modelRequest({ tools: [weatherTool, timeTool], toolChoice: { kind: 'allowed', mode: 'auto', names: ['get_time'] } }));
      assert.deepEqual(
        (auto['tools'] as { name: string }[]).map((t) => t.name),
        ['get_time'],
      );
      assert.deepEqual(auto['tool_choice'], { type: 'auto' });
      const required = await sent(
        modelRequest({ tools: [weatherTool, timeTool], toolChoice: { kind: 'allowed', mode: 'required', names: ['get_weather', 'get_time'] } }),
      );
      assert.deepEqual(
        (required['tools'] as { name: string }[]).map((t) => t.name),
        ['get_weather', 'get_time'],
      );
      assert.deepEqual(required['tool_choice'], { type: 'any' });
      await assert.rejects(
        anthropic.provider.generate(modelRequest({ tools: [weatherTool], toolChoice: { kind: 'allowed', mode: 'required', names: ['nope'] } }), 'claude', {}),
        isBadRequest('tool_choice'),
      );
    });

    it('sends native Messages tools verbatim; hosted, MCP and other formats’ tools are 400 unsupported_tool_type (nothing sent)', async () => {
      const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 };
      const body = await sent(
        modelRequest({ tools: [weatherTool, { kind: 'native', format: 'messages', type: 'web_search_20250305', definition: webSearch }] }),
      );
      assert.deepEqual((body['tools'] as unknown[])[1], webSearch);

      anthropic.fake.requests.splice(0);
      const refused: ToolDefinition[] = [
        { kind: 'hosted', type: 'svc_web_search', config: {} },
        { kind: 'mcp', serverLabel: 'docs', config: { server_url: 'https://mcp.example' } },
        { kind: 'native', format: 'responses', type: 'web_search_preview', definition: { type: 'web_search_preview' } },
      ];
      for (const tool of refused) {
        await assert.rejects(anthropic.provider.generate(modelRequest({ tools: [weatherTool, tool] }), 'claude', {}), (err: unknown) => {
          return err instanceof GatewayError && err.status === 400 && err.code === 'unsupported_tool_type' && err.param === 'tools[1]';
        });
      }
      assert.equal(anthropic.fake.requests.length, 0);
    });
  });

  describe('options', () => {
    it('honours exactly the options it maps; the others are not sent', async () => {
      assert.deepEqual([...anthropic.provider.honours].sort(), [
        'maxOutputTokens',
        'parallelToolCalls',
        'reasoning',
        'responseFormat',
        'stop',
        'temperature',
        'topK',
        'topP',
        'user',
      ]);
      assert.equal(anthropic.provider.extrasOf, 'messages');
      const body = await sent(
        modelRequest({
          options: {
            temperature: 0.5,
            seed: 7,
            presencePenalty: 0.1,
            frequencyPenalty: 0.5,
            n: 2,
            logprobs: true,
            topLogprobs: 3,
            verbosity: 'low',
            serviceTier: 'priority',
            promptCacheKey: 'k1',
          },
        }),
      );
      assert.deepEqual(body, { messages: [{ role: 'user', content: 'hi' }], max_tokens: 4096, temperature: 0.5, model: 'claude-sonnet-4-20250514' });
    });

    it('reasoning: an explicit budget is sent as given; effort becomes a budget from the table, under the caller’s output limit (never raised); disabled and none', async () => {
      const cases: [Partial<ModelRequest['options']>, Record<string, unknown>][] = [
        [
          { reasoning: { budgetTokens: 2000 }, maxOutputTokens: 1000 },
          { thinking: { type: 'enabled', budget_tokens: 2000 }, max_tokens: 1000 },
        ],
        [{ reasoning: { budgetTokens: 2000 } }, { thinking: { type: 'enabled', budget_tokens: 2000 }, max_tokens: 4096 }],
        [{ reasoning: { budgetTokens: 10000 } }, { thinking: { type: 'enabled', budget_tokens: 10000 }, max_tokens: 14096 }],
        [{ reasoning: { effort: 'minimal' } }, { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 4096 }],
        [
          { reasoning: { effort: 'low' }, maxOutputTokens: 3000 },
          { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 3000 },
        ],
        [{ reasoning: { effort: 'medium' } }, { thinking: { type: 'enabled', budget_tokens: 8192 }, max_tokens: 8192 + 4096 }],
        // The caller's limit counts the thinking (OpenAI's max_output_tokens / max_completion_tokens): the budget is cut to fit
        // under it, and an effort that cannot fit (the smallest budget is 1024) is sent without thinking.
        [
          { reasoning: { effort: 'high' }, maxOutputTokens: 10000 },
          { thinking: { type: 'enabled', budget_tokens: 9999 }, max_tokens: 10000 },
        ],
        [
          { reasoning: { effort: 'high' }, maxOutputTokens: 1000 },
          { thinking: undefined, max_tokens: 1000 },
        ],
        [
          { reasoning: { effort: 'minimal' }, maxOutputTokens: 1025 },
          { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 1025 },
        ],
        [
          { reasoning: { effort: 'xhigh' }, maxOutputTokens: 40000 },
          { thinking: { type: 'enabled', budget_tokens: 32768 }, max_tokens: 40000 },
        ],
        [{ reasoning: { effort: 'high', budgetTokens: 3000 } }, { thinking: { type: 'enabled', budget_tokens: 3000 }, max_tokens: 4096 }],
        [{ reasoning: { disabled: true } }, { thinking: { type: 'disabled' }, max_tokens: 4096 }],
        [{ reasoning: { effort: 'none' } }, { thinking: undefined, max_tokens: 4096 }],
        [{ reasoning: { summary: 'auto' } }, { thinking: undefined, max_tokens: 4096 }],
      ];
      for (const [options, expected] of cases) {
        const body = await sent(modelRequest({ options }));
        for (const [key, value] of Object.entries(expected)) assert.deepEqual(body[key], value, `${JSON.stringify(options)}: ${key}`);
      }
    });

    it('sends the unmodelled fields of a /v1/messages caller (container, mcp_servers, service_tier) but never over a mapped or hosting field; other formats’ extras are not sent', async () => {
      const mcpServers = [{ type: 'url', url: 'https://mcp.example/sse', name: 'docs' }];
      const body = await sent(
        modelRequest({
          options: { maxOutputTokens: 50 },
          extra: {
            format: 'messages',
            fields: { container: 'container_abc', mcp_servers: mcpServers, service_tier: 'standard_only', max_tokens: 9, model: 'other', stream: true },
          },
        }),
      );
      assert.equal(body['container'], 'container_abc');
      assert.deepEqual(body['mcp_servers'], mcpServers);
      assert.equal(body['service_tier'], 'standard_only');
      assert.equal(body['max_tokens'], 50);
      assert.equal(body['model'], 'claude-sonnet-4-20250514');
      assert.equal(body['stream'], undefined);

      const chatExtras = await sent(modelRequest({ extra: { format: 'chat', fields: { logit_bias: { '50256': -100 }, service_tier: 'flex' } } }));
      assert.equal(chatExtras['logit_bias'], undefined);
      assert.equal(chatExtras['service_tier'], undefined);
    });
  });

  describe('errors', () => {
    it("passes the upstream status with Anthropic's error type and message", async () => {
      anthropic.fake.script({
        kind: 'error',
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: must be at most 8192' } },
      });
      await assert.rejects(anthropic.provider.generate(modelRequest({ options: { maxOutputTokens: 99999 } }), 'claude', {}), (err: unknown) => {
        assert.ok(err instanceof GatewayError);
        assert.equal(err.status, 400);
        assert.equal(err.type, 'invalid_request_error');
        assert.match(err.message, /HTTP 400 \(invalid_request_error\): max_tokens: must be at most 8192/);
        return true;
      });
    });

    it('reports a rejected key as the upstream 401 with its message, and a 429 with Retry-After', async () => {
      const bad = createAnthropicProvider('claude-bad', fakeAnthropicProviderConfig(anthropic.fake, { apiKey: 'wrong' }));
      try {
        await assert.rejects(bad.generate(modelRequest(), 'claude', {}), (err: unknown) => {
          return err instanceof GatewayError && err.status === 401 && /invalid x-api-key/.test(err.message) && err.type === 'authentication_error';
        });
      } finally {
        await bad.close();
      }
      anthropic.fake.script({
        kind: 'error',
        status: 429,
        headers: { 'retry-after': '30' },
        body: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' } },
      });
      await assert.rejects(anthropic.provider.generate(modelRequest(), 'claude', {}), (err: unknown) => {
        return err instanceof GatewayError && err.status === 429 && err.headers['retry-after'] === '30' && err.type === 'rate_limit_error';
      });
    });

    it('refuses a 200 reply that is not an Anthropic message with an upstream_error', async () => {
      anthropic.fake.script({ kind: 'json', body: { id: 'x', choices: [] } });
      await assert.rejects(anthropic.provider.generate(modelRequest(), 'claude', {}), (err: unknown) => {
        return err instanceof GatewayError && err.code === 'upstream_error' && /not an Anthropic message/.test(err.message);
      });
    });
  });

  describe('pass-through (the /v1/messages route with an Anthropic upstream)', () => {
    it("forwards the caller's bytes untouched with the provider's headers", async () => {
      const bytes = Buffer.from('{"model":"claude","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"unknown_field":{"x":1}}');
      anthropic.fake.script({ kind: 'json', body: textMessage('hello') });
      assert.deepEqual(anthropic.provider.forwards, ['messages']);
      const response = await anthropic.provider.forward('messages', bytes, { stream: false });
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { content: { text: string }[] }).content[0]?.text, 'hello');
      assert.equal(anthropic.fake.requests[0]?.raw, bytes.toString());
      assert.equal(anthropic.fake.requests[0]?.headers['x-api-key'], FAKE_ANTHROPIC_KEY);
    });
  });
});
