// svc_web_search: the organization's search API (organizations[].tools.webSearch: SearxNG, Brave
// Search or Tavily, one adapter file each), results as a numbered list of title, URL and snippet. The
// API's URL is the operator's, so it is trusted and reached the way provider calls are (directly, or
// through the corporate proxy of HTTPS_PROXY / HTTP_PROXY / NO_PROXY when one is set), not through the
// SSRF guard nor the conversation's egress profile (an intranet SearxNG must stay reachable); the result URLs are
// passed on untouched. An organization without webSearch is offered the tool like any other (the
// catalog is the same for all) and the call fails saying search is not configured.
import { request } from 'undici';
import type { WebSearchConfig, WebSearchProvider } from '../../../config/types';
import { createUpstreamDispatcher } from '../../../providers/http/upstream-dispatcher';
import { ToolFailure, type HostedToolFactory, type ToolCallContext } from '../../types';
import { SearchAnswerError, type SearchAdapter, type SearchHit } from './adapter';
import { braveAdapter } from './brave';
import { searxngAdapter } from './searxng';
import { tavilyAdapter } from './tavily';

export const SEARCH_ADAPTERS: Record<WebSearchProvider, SearchAdapter> = {
  searxng: searxngAdapter,
  brave: braveAdapter,
  tavily: tavilyAdapter,
};

const DEFAULT_COUNT = 5;
const MAX_COUNT = 20;
/** Largest search answer read; real answers are a few tens of KB. */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
/** Longest snippet shown; the model can download the page for more. */
const MAX_SNIPPET_CHARS = 600;

export const webSearchTool: HostedToolFactory = (deps) => {
  // Time limits are the call's own (settings.timeoutMs); the dispatcher's only bound the connect.
  const agent = createUpstreamDispatcher({ connectMs: 10_000, keepAliveMs: 10_000, http2: false });

  async function search(settings: WebSearchConfig, query: string, count: number, ctx: ToolCallContext): Promise<SearchHit[]> {
    const adapter = SEARCH_ADAPTERS[settings.provider];
    const baseUrl = settings.url ?? adapter.defaultUrl;
    if (baseUrl === null) throw new ToolFailure(`Web search (${adapter.label}) has no URL configured for this organization.`);
    const call = adapter.request(baseUrl, settings.apiKey, query, count);
    const hide = (message: string): string => (settings.apiKey ? message.split(settings.apiKey).join('***') : message);
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(settings.timeoutMs)]);
    let status: number;
    let raw: string;
    try {
      const reply = await request(call.url, {
        method: call.method,
        headers: call.headers,
        ...(call.body !== undefined ? { body: call.body } : {}),
        signal,
        dispatcher: agent,
      });
      status = reply.statusCode;
      raw = await readCapped(reply.body as AsyncIterable<Buffer> & { destroy(): void });
    } catch (err) {
      if (err instanceof ToolFailure) throw err;
      const name = err instanceof Error ? err.name : '';
      if (name === 'TimeoutError') throw new ToolFailure(`${adapter.label} did not answer within ${settings.timeoutMs} ms.`);
      if (name === 'AbortError') throw new ToolFailure('The search was stopped.');
      throw new ToolFailure(hide(`${adapter.label} could not be reached: ${err instanceof Error ? err.message : String(err)}`));
    }
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // an error page in HTML or text: describeError gets the text
    }
    if (status < 200 || status > 299) {
      deps.logger.warn('web search failed', { orgId: ctx.orgId, provider: settings.provider, status });
      throw new ToolFailure(hide(`Web search failed: ${adapter.describeError(status, body)}.`));
    }
    if (typeof body === 'string') throw new ToolFailure(`${adapter.label} answered with something other than JSON.`);
    try {
      return adapter.hits(body).slice(0, count);
    } catch (err) {
      if (err instanceof SearchAnswerError) throw new ToolFailure(`${adapter.label} answered in an unexpected shape: ${err.message}.`);
      throw err;
    }
  }

  return {
    tools: [
      {
        type: 'svc_web_search',
        description: `Search the web. Answers a numbered list of results, each with its title, URL and a snippet (default ${DEFAULT_COUNT} results, at most ${MAX_COUNT}). Use svc_web_download to fetch a result.`,
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string', description: 'What to search for.' },
            count: { type: 'integer', minimum: 1, maximum: MAX_COUNT, description: `How many results (default ${DEFAULT_COUNT}).` },
          },
          required: ['query'],
          additionalProperties: false,
        },
        async execute(args, ctx) {
          const query = args['query'];
          if (typeof query !== 'string' || query.trim() === '') throw new ToolFailure('Argument query must be a non-empty string.');
          const rawCount = args['count'] ?? DEFAULT_COUNT;
          if (typeof rawCount !== 'number' || !Number.isInteger(rawCount) || rawCount < 1) throw new ToolFailure('Argument count must be a positive integer.');
          const settings = deps.config.organizations.find((o) => o.id === ctx.orgId)?.tools.webSearch;
          if (!settings) {
            throw new ToolFailure('Web search is not configured for this organization (the operator sets organizations[].tools.webSearch).');
          }
          const hits = await search(settings, query.trim(), Math.min(rawCount, MAX_COUNT), ctx);
          return { output: formatHits(query.trim(), hits) };
        },
      },
    ],
    close: () => agent.close(),
  };
};

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new ToolFailure(`The search answer is larger than ${MAX_ANSWER_BYTES} bytes.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function formatHits(query: string, hits: readonly SearchHit[]): string {
  if (hits.length === 0) return `No results for ${JSON.stringify(query)}.`;
  const lines = hits.map((hit, i) => {
    const snippet = hit.snippet.replace(/\s+/g, ' ').trim();
    const shown = snippet.length > MAX_SNIPPET_CHARS ? `${snippet.slice(0, MAX_SNIPPET_CHARS)}…` : snippet;
    return [`${i + 1}. ${hit.title.replace(/\s+/g, ' ').trim() || '(untitled)'}`, `   ${hit.url}`, ...(shown ? [`   ${shown}`] : [])].join('\n');
  });
  return `Results for ${JSON.stringify(query)}:\n\n${lines.join('\n\n')}`;
}
