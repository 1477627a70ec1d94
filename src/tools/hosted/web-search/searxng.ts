// SearxNG's search API (docs.searxng.org/dev/search_api): GET /search?q=…&format=json, answered with
// results[] {title, url, content}. An instance whose settings.yml does not list json under
// search.formats answers 403; its limiter answers 429.
import { endpoint, hitsFrom, record, statusMeaning, type SearchAdapter } from './adapter';

export const searxngAdapter: SearchAdapter = {
  label: 'SearxNG',
  defaultUrl: null,
  request(baseUrl, _apiKey, query) {
    const url = endpoint(baseUrl, 'search');
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    // SearxNG has no result-count parameter: the tool keeps the first `count`.
    return { url: url.toString(), method: 'GET', headers: { accept: 'application/json' } };
  },
  hits(body) {
    return hitsFrom(record(body)['results'], 'content', 'results');
  },
  describeError(status) {
    if (status === 403) return 'SearxNG answered 403: the instance does not serve JSON (its settings.yml must list json under search.formats)';
    return `SearxNG answered HTTP ${status}: ${statusMeaning(status)}`;
  },
};
