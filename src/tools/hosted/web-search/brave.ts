// The Brave Search API: GET /res/v1/web/search?q=…&count=… with the key in X-Subscription-Token,
// answered with web.results[] {title, url, description}; an error is {type: "ErrorResponse",
// error: {status, code, detail}} (e.g. 422 SUBSCRIPTION_TOKEN_INVALID, 429 RATE_LIMITED).
import { endpoint, hitsFrom, record, statusMeaning, text, type SearchAdapter } from './adapter';

/** Brave serves at most 20 results per request. */
const MAX_COUNT = 20;

export const braveAdapter: SearchAdapter = {
  label: 'Brave Search',
  defaultUrl: 'https://api.search.brave.com',
  request(baseUrl, apiKey, query, count) {
    const url = endpoint(baseUrl, 'res/v1/web/search');
    url.searchParams.set('q', query);
    url.searchParams.set('count', String(Math.min(count, MAX_COUNT)));
    return { url: url.toString(), method: 'GET', headers: { accept: 'application/json', 'x-subscription-token': apiKey ?? '' } };
  },
  hits(body) {
    const web = record(body)['web'];
    // A query with no web results has no `web` section at all.
    if (web === undefined) return [];
    return hitsFrom(record(web)['results'], 'description', 'web.results');
  },
  describeError(status, body) {
    const error = record(record(body)['error']);
    const code = text(error['code']);
    const detail = text(error['detail']);
    const said = code || detail ? ` (${[code, detail].filter((s) => s !== '').join(': ')})` : '';
    const meaning = code === 'SUBSCRIPTION_TOKEN_INVALID' ? 'it refused the API key' : statusMeaning(status);
    return `Brave Search answered HTTP ${status}${said}: ${meaning}`;
  },
};
