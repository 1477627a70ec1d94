// svc_web_search against local fakes of each search API, answering in that API's real JSON shapes
// (SearxNG /search?format=json, Brave /res/v1/web/search, Tavily POST /search), errors included.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { formatHits, webSearchTool } from '../../../src/tools/hosted/web-search';
import { ToolFailure, type HostedTool } from '../../../src/tools/types';
import { listenOnLoopback, readBody, type LoopbackServer } from '../../fixtures/upstreams/loopback-server';
import { startHttpProxy } from './proxies';
import { conversationId, openToolBed, type ToolBed } from './tool-bed';

function restoreEnv(saved: { http: string | undefined; no: string | undefined }): void {
  if (saved.http === undefined) delete process.env['HTTP_PROXY'];
  else process.env['HTTP_PROXY'] = saved.http;
  if (saved.no === undefined) delete process.env['NO_PROXY'];
  else process.env['NO_PROXY'] = saved.no;
}

interface SeenRequest {
  remotePort: number | undefined;
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A result URL with everything a rewrite would disturb: query, encoded space, fragment. */
const ODD_URL = 'https://docs.example.org/guide?section=proxy&q=a%20b#egress';

const SEARXNG_ANSWER = {
  query: 'egress proxy',
  number_of_results: 0,
  results: [
    {
      url: ODD_URL,
      title: 'Egress   proxies\nexplained',
      content: 'How a gateway sends traffic out through a proxy.',
      engine: 'duckduckgo',
      parsed_url: ['https', 'docs.example.org', '/guide', '', 'section=proxy&q=a%20b', 'egress'],
      template: 'default.html',
      engines: ['duckduckgo', 'bing'],
      positions: [1, 2],
      score: 2.5,
      category: 'general',
    },
    { url: 'https://example.com/second', title: 'Second', content: '', engine: 'bing', engines: ['bing'], positions: [2], score: 1, category: 'general' },
    {
      url: 'https://example.com/third',
      title: 'Third',
      content: 'third snippet',
      engine: 'bing',
      engines: ['bing'],
      positions: [3],
      score: 0.5,
      category: 'general',
    },
  ],
  answers: [],
  corrections: [],
  infoboxes: [],
  suggestions: ['egress proxy setup'],
  unresponsive_engines: [],
};

function braveAnswer(query: string): Record<string, unknown> {
  const base = { query: { original: query, show_strict_warning: false, is_navigational: false, spellcheck_off: true }, type: 'search' };
  if (query === 'nothing at all') return base; // Brave leaves out `web` when it has no web results
  return {
    ...base,
    mixed: { type: 'mixed', main: [{ type: 'web', index: 0, all: false }], top: [], side: [] },
    web: {
      type: 'search',
      results: [
        {
          title: 'Brave result',
          url: ODD_URL,
          is_source_local: false,
          is_source_both: false,
          description: 'A <strong>proxy</strong> for egress.',
          page_age: '2025-01-10T00:00:00',
          language: 'en',
          family_friendly: true,
          type: 'search_result',
          subtype: 'generic',
          meta_url: { scheme: 'https', netloc: 'docs.example.org', hostname: 'docs.example.org', path: '› guide' },
        },
      ],
      family_friendly: true,
    },
  };
}

const braveError = (status: number, code: string, detail: string): Record<string, unknown> => ({
  type: 'ErrorResponse',
  error: { id: 'c1a0f3e2-0000-4000-8000-000000000000', status, code, detail, meta: { component: 'authentication' } },
  time: 1735689600,
});

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp): Promise<string> {
  let message = '';
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ToolFailure, `expected a ToolFailure, got ${String(err)}`);
    assert.match(err.message, pattern);
    message = err.message;
    return true;
  });
  return message;
}

describe('svc_web_search', function () {
  this.timeout(60_000);
  let api: LoopbackServer;
  const seen: SeenRequest[] = [];
  let bed: ToolBed;
  let search: HostedTool;

  before(async () => {
    api = await listenOnLoopback(async (req, res) => {
      const body = await readBody(req);
      seen.push({ remotePort: req.socket.remotePort, method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://x');
      const json = (status: number, value: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      };
      if (url.pathname === '/searx/search') {
        // An instance serves JSON only when its settings.yml lists it: anything else is 403.
        if (url.searchParams.get('format') !== 'json') return void res.writeHead(403).end('Forbidden');
        return json(200, { ...SEARXNG_ANSWER, query: url.searchParams.get('q') });
      }
      if (url.pathname === '/nojson/search') return void res.writeHead(403, { 'content-type': 'text/html' }).end('<html><body>403 Forbidden</body></html>');
      if (url.pathname === '/slow/search') {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        return json(200, SEARXNG_ANSWER);
      }
      if (url.pathname === '/huge/search') return json(200, { results: [{ url: 'https://a.example', title: 'x'.repeat(3 * 1024 * 1024), content: '' }] });
      if (url.pathname === '/broken/search') return json(200, { results: 'not a list' });
      if (url.pathname === '/res/v1/web/search') {
        if (req.headers['x-subscription-token'] !== 'BSA-good-key') {
          return json(422, braveError(422, 'SUBSCRIPTION_TOKEN_INVALID', 'The provided subscription token is invalid.'));
        }
        const q = url.searchParams.get('q') ?? '';
        if (q === 'too often') return json(429, braveError(429, 'RATE_LIMITED', 'Request rate limit exceeded for plan.'));
        return json(200, braveAnswer(q));
      }
      if (url.pathname === '/search' && req.method === 'POST') {
        const auth = req.headers['authorization'];
        if (auth === 'Bearer tvly-leaky-secret-123') return json(401, { detail: { error: 'Unauthorized: invalid API key tvly-leaky-secret-123.' } });
        if (auth === 'Bearer tvly-over-limit') {
          return json(432, { detail: { error: "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com" } });
        }
        if (auth !== 'Bearer tvly-good') return json(401, { detail: { error: 'Unauthorized: missing or invalid API key.' } });
        const request = JSON.parse(body) as { query: string; max_results: number };
        const results = [
          { title: 'Tavily one', url: ODD_URL, content: 'First Tavily snippet.', score: 0.91, raw_content: null },
          { title: 'Tavily two', url: 'https://example.net/two', content: 'Second.', score: 0.62, raw_content: null },
        ].slice(0, request.max_results);
        return json(200, { query: request.query, follow_up_questions: null, answer: null, images: [], results, response_time: 0.42 });
      }
      res.writeHead(404).end();
    });
    const org = (id: string, webSearch?: Record<string, unknown>): Record<string, unknown> => ({
      id,
      name: id,
      models: ['*'],
      users: id === 'searx' ? [{ id: 'u-member', name: 'Member', role: 'member', keys: [] }] : [],
      ...(webSearch ? { tools: { webSearch } } : {}),
    });
    bed = await openToolBed({
      config: {
        organizations: [
          org('searx', { provider: 'searxng', url: `${api.origin}/searx` }),
          org('searx-nojson', { provider: 'searxng', url: `${api.origin}/nojson/` }),
          org('searx-slow', { provider: 'searxng', url: `${api.origin}/slow`, timeoutMs: 1000 }),
          org('searx-huge', { provider: 'searxng', url: `${api.origin}/huge` }),
          org('searx-broken', { provider: 'searxng', url: `${api.origin}/broken` }),
          org('brave', { provider: 'brave', url: api.origin, apiKey: 'BSA-good-key' }),
          org('brave-badkey', { provider: 'brave', url: api.origin, apiKey: 'BSA-revoked' }),
          org('tavily', { provider: 'tavily', url: api.origin, apiKey: 'tvly-good' }),
          org('tavily-leaky', { provider: 'tavily', url: api.origin, apiKey: 'tvly-leaky-secret-123' }),
          org('tavily-limit', { provider: 'tavily', url: api.origin, apiKey: 'tvly-over-limit' }),
          org('none'),
        ],
      },
    });
    search = bed.tool(webSearchTool, 'svc_web_search');
  });

  after(async () => {
    await bed?.close();
    await api?.close();
  });

  const run = (orgId: string, args: Record<string, unknown>): Promise<{ output: string }> => search.execute(args, bed.ctx(conversationId(), orgId));

  describe('SearxNG', () => {
    it('asks /search?format=json under the instance URL and lists title, URL and snippet, numbered', async () => {
      const { output } = await run('searx', { query: 'egress proxy', count: 2 });
      assert.equal(
        output,
        [
          'Results for "egress proxy":',
          '',
          `1. Egress proxies explained\n   ${ODD_URL}\n   How a gateway sends traffic out through a proxy.`,
          '',
          '2. Second\n   https://example.com/second',
        ].join('\n'),
      );
      const request = seen.at(-1)!;
      assert.equal(request.method, 'GET');
      const url = new URL(request.url, 'http://x');
      assert.equal(url.pathname, '/searx/search');
      assert.equal(url.searchParams.get('q'), 'egress proxy');
      assert.equal(url.searchParams.get('format'), 'json');
    });

    it('explains a 403: the instance does not serve JSON', async () => {
      await rejectsWith(
        run('searx-nojson', { query: 'x' }),
        /SearxNG answered 403: the instance does not serve JSON \(its settings\.yml must list json under search\.formats\)/,
      );
    });

    it('fails past its time limit, on an answer too large, and on an answer not in its shape', async () => {
      const started = Date.now();
      await rejectsWith(run('searx-slow', { query: 'x' }), /^SearxNG did not answer within 1000 ms\.$/);
      assert.ok(Date.now() - started < 2500);
      await rejectsWith(run('searx-huge', { query: 'x' }), /larger than 2097152 bytes/);
      await rejectsWith(run('searx-broken', { query: 'x' }), /^SearxNG answered in an unexpected shape: the answer has no results list\.$/);
    });
  });

  describe('Brave Search', () => {
    it('sends the key in X-Subscription-Token and the count, and lists web.results', async () => {
      const { output } = await run('brave', { query: 'egress proxy', count: 30 });
      assert.equal(output, `Results for "egress proxy":\n\n1. Brave result\n   ${ODD_URL}\n   A <strong>proxy</strong> for egress.`);
      const request = seen.at(-1)!;
      const url = new URL(request.url, 'http://x');
      assert.equal(url.pathname, '/res/v1/web/search');
      assert.equal(url.searchParams.get('count'), '20', 'capped at the API maximum');
      assert.equal(request.headers['x-subscription-token'], 'BSA-good-key');
    });

    it('answers "no results" when Brave has no web section', async () => {
      assert.equal((await run('brave', { query: 'nothing at all' })).output, 'No results for "nothing at all".');
    });

    it('explains its errors: an invalid key (422), a rate limit (429)', async () => {
      await rejectsWith(
        run('brave-badkey', { query: 'x' }),
        /^Web search failed: Brave Search answered HTTP 422 \(SUBSCRIPTION_TOKEN_INVALID: The provided subscription token is invalid\.\): it refused the API key\.$/,
      );
      await rejectsWith(
        run('brave', { query: 'too often' }),
        /HTTP 429 \(RATE_LIMITED: Request rate limit exceeded for plan\.\): it is rate limiting this gateway/,
      );
    });
  });

  describe('Tavily', () => {
    it('POSTs {query, max_results} with a Bearer key and lists results', async () => {
      const { output } = await run('tavily', { query: 'egress proxy' });
      assert.equal(
        output,
        `Results for "egress proxy":\n\n1. Tavily one\n   ${ODD_URL}\n   First Tavily snippet.\n\n2. Tavily two\n   https://example.net/two\n   Second.`,
      );
      const request = seen.at(-1)!;
      assert.equal(request.method, 'POST');
      assert.equal(request.headers['authorization'], 'Bearer tvly-good');
      assert.deepEqual(JSON.parse(request.body), { query: 'egress proxy', max_results: 5 });
    });

    it('explains its errors (a used-up plan, 432) and never repeats the API key', async () => {
      await rejectsWith(
        run('tavily-limit', { query: 'x' }),
        /Tavily answered HTTP 432 \(This request exceeds your plan's set usage limit.*\): the plan or spending limit is used up/,
      );
      const message = await rejectsWith(
        run('tavily-leaky', { query: 'x' }),
        /^Web search failed: Tavily answered HTTP 401 \(Unauthorized: invalid API key \*\*\*\.\): it refused the credentials\.$/,
      );
      assert.ok(!message.includes('tvly-leaky'));
      assert.ok(!bed.logs.join('\n').includes('tvly-leaky'), 'nor does a log line');
    });
  });

  it('goes out like provider calls: through the corporate proxy of HTTP_PROXY when one is set', async () => {
    const proxy = await startHttpProxy('corp', 'corp-pass');
    const saved = { http: process.env['HTTP_PROXY'], no: process.env['NO_PROXY'] };
    process.env['HTTP_PROXY'] = `http://corp:corp-pass@${proxy.hostPort}`;
    process.env['NO_PROXY'] = '';
    const set = webSearchTool(bed.deps); // the dispatcher reads the environment when the tool is made
    try {
      restoreEnv(saved);
      const { output } = await set.tools[0]!.execute({ query: 'via corp' }, bed.ctx(conversationId(), 'searx'));
      assert.match(output, /^Results for "via corp":/);
      assert.equal(proxy.forwarded.length, 1, 'the search went through the proxy');
      assert.ok(proxy.carries(seen.at(-1)!.remotePort));
    } finally {
      restoreEnv(saved);
      await set.close?.();
      await proxy.close();
    }
  });

  it('fails clearly for an organization without web search configured', async () => {
    await rejectsWith(run('none', { query: 'x' }), /^Web search is not configured for this organization/);
  });

  it('shows a snippet up to 600 characters, whitespace collapsed, and says when it was cut', () => {
    const output = formatHits('q', [{ title: ' A\n title ', url: 'https://a.example/', snippet: `${'word '.repeat(200)}` }]);
    const snippetLine = output.split('\n').at(-1)!;
    assert.equal(snippetLine, `   ${'word '.repeat(120).slice(0, 600)}…`);
    assert.match(output, /^Results for "q":\n\n1\. A title\n {3}https:\/\/a\.example\/\n/);
  });

  it('checks its arguments', async () => {
    await rejectsWith(run('searx', { query: '  ' }), /Argument query/);
    await rejectsWith(run('searx', { query: 'x', count: 0 }), /Argument count/);
    await rejectsWith(run('searx', { query: 'x', count: 2.5 }), /Argument count/);
  });
});
