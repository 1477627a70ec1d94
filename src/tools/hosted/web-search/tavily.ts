// Tavily's search API: POST /search {query, max_results} with the key as a Bearer token, answered with
// results[] {title, url, content, score}; an error is {detail: {error}} (401 bad key, 429 rate limit,
// 432 plan limit, 433 pay-as-you-go limit).
import { endpoint, hitsFrom, record, statusMeaning, text, type SearchAdapter } from './adapter';

/** Tavily's max_results range is 0..20. */
const MAX_COUNT = 20;

export const tavilyAdapter: SearchAdapter = {
  label: 'Tavily',
  defaultUrl: 'https://api.tavily.com',
  request(baseUrl, apiKey, query, count) {
    return {
      url: endpoint(baseUrl, 'search').toString(),
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${apiKey ?? ''}` },
      body: JSON.stringify({ query, max_results: Math.min(count, MAX_COUNT) }),
    };
  },
  hits(body) {
    return hitsFrom(record(body)['results'], 'content', 'results');
  },
  describeError(status, body) {
    const detail = record(body)['detail'];
    const said = text(record(detail)['error']) || text(detail);
    const meaning = status === 432 || status === 433 ? 'the plan or spending limit is used up' : statusMeaning(status);
    return `Tavily answered HTTP ${status}${said ? ` (${said})` : ''}: ${meaning}`;
  },
};
