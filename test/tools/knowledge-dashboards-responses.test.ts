// svc_knowledge_store_search and svc_dashboard_generate through POST /v1/responses: a model (a fake
// OpenAI upstream) searches the organization's knowledge store, charts what it found, and the
// `svc_call` items carry the results and a dashboard link that opens.
import assert from 'node:assert/strict';
import request from 'supertest';
import { jsonReply, post } from '../responses/http-helpers';
import { messagesOf, toolMessages, useToolGateway, type Json } from './tool-gateway';

/** The gateway's address as links name it (its port is only known once it listens). */
const PUBLIC_URL = 'http://gateway.test';

describe('knowledge search and dashboards through POST /v1/responses', function () {
  this.timeout(90_000);
  const bed = useToolGateway(() => ({ config: { server: { publicUrl: PUBLIC_URL }, plugins: { auth: { enabled: true } } } }));
  before(async () => {
    const store = await request(bed.gw.url).post('/v1/knowledge_stores').set(bed.gw.auth('admin')).send({ name: 'sales-notes' }).expect(201);
    for (const [title, text] of [
      ['Q1 regional revenue', 'Revenue in Q1: north 120, south 80, west 45. North grew fastest.'],
      ['Canteen', 'The canteen serves soup on Mondays.'],
    ]) {
      await request(bed.gw.url).post(`/v1/knowledge_stores/${store.body.id}/documents`).set(bed.gw.auth('admin')).send({ title, text }).expect(201);
    }
  });

  it('the model searches, charts, and gets the results and a working link in svc_call items', async () => {
    bed.upstream.script((body) => {
      const tools = toolMessages(body);
      if (tools.length === 0) {
        return {
          toolCalls: [{ id: 'call_s', name: 'svc_knowledge_store_search', arguments: JSON.stringify({ query: 'regional revenue', store: 'sales-notes' }) }],
        };
      }
      if (tools.length === 1) {
        const spec = { mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'revenue', type: 'quantitative' } } };
        const data = [
          { region: 'north', revenue: 120 },
          { region: 'south', revenue: 80 },
          { region: 'west', revenue: 45 },
        ];
        return { toolCalls: [{ id: 'call_d', name: 'svc_dashboard_generate', arguments: JSON.stringify({ title: 'Q1 revenue', data, spec }) }] };
      }
      return { reply: 'Here is your dashboard.' };
    });
    const reply = await jsonReply(
      await post(
        `${bed.gw.url}/v1/responses`,
        { model: 'fake', input: 'Chart Q1 revenue by region', tools: [{ type: 'svc_knowledge_store_search' }, { type: 'svc_dashboard_generate' }] },
        bed.gw.auth('admin'),
      ),
    );
    assert.equal(reply.status, 200, reply.text);
    const output = reply.body['output'] as Json[];
    assert.deepEqual(
      output.map((item) => [item['type'], item['name'] ?? null, item['status']]),
      [
        ['svc_call', 'svc_knowledge_store_search', 'completed'],
        ['svc_call', 'svc_dashboard_generate', 'completed'],
        ['message', null, 'completed'],
      ],
    );
    const search = JSON.parse(String(output[0]!['output'])) as { results: { title: string; store: string; snippet: string }[] };
    assert.deepEqual(
      search.results.map((r) => [r.store, r.title]),
      [['sales-notes', 'Q1 regional revenue']],
    );
    assert.match(search.results[0]!.snippet, /\*\*Revenue\*\*/);
    // The model was shown the same output.
    const secondTurn = messagesOf(bed.upstream.calls[1]!.body);
    assert.match(String(secondTurn.find((m) => m.role === 'tool')?.content), /Q1 regional revenue/);

    const made = JSON.parse(String(output[1]!['output'])) as { url: string; dashboard_id: string; marks: number };
    assert.equal(made.marks, 3);
    assert.ok(made.url.startsWith(`${PUBLIC_URL}/v1/dashboards/${made.dashboard_id}/view?`));
    const spec = await request(bed.gw.url)
      .get(`${made.url.slice(PUBLIC_URL.length)}&format=json`)
      .expect(200);
    assert.equal(spec.body.data.values.length, 3);
    const stored = await bed.gw.store.dashboards.get(made.dashboard_id);
    assert.equal(stored?.orgId, 'acme');
  });
});
