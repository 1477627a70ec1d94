// One search API behind svc_web_search: how a query becomes its HTTP request, how its answer becomes
// hits, and what its error answers mean. One file per provider; the tool (index.ts) does the HTTP.
export interface SearchHit {
  title: string;
  /** As the API gave it: never rewritten. */
  url: string;
  snippet: string;
}

export interface SearchCall {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

export interface SearchAdapter {
  /** The provider's name in messages. */
  readonly label: string;
  /** The public API's base URL, or null when the operator must name an instance. */
  readonly defaultUrl: string | null;
  request(baseUrl: string, apiKey: string | undefined, query: string, count: number): SearchCall;
  /** The hits of a 2xx answer's JSON body; throws SearchAnswerError when it is not the API's shape. */
  hits(body: unknown): SearchHit[];
  /** What a non-2xx answer means (the body parsed as JSON when it was, else its text). */
  describeError(status: number, body: unknown): string;
}

export class SearchAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchAnswerError';
  }
}

/** `relative` under `base` (a base with a path keeps it: https://host/searx + search → /searx/search). */
export function endpoint(base: string, relative: string): URL {
  return new URL(relative, base.endsWith('/') ? base : `${base}/`);
}

export function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Hits from an array of {title, url, <snippetField>} objects; entries without a URL are skipped. */
export function hitsFrom(list: unknown, snippetField: string, where: string): SearchHit[] {
  if (!Array.isArray(list)) throw new SearchAnswerError(`the answer has no ${where} list`);
  return list.flatMap((entry): SearchHit[] => {
    const item = record(entry);
    const url = text(item['url']);
    if (url === '') return [];
    return [{ title: text(item['title']), url, snippet: text(item[snippetField]) }];
  });
}

/** A message for a status the provider does not document specially. */
export function statusMeaning(status: number): string {
  if (status === 401 || status === 403) return 'it refused the credentials';
  if (status === 429) return 'it is rate limiting this gateway; try again later';
  if (status >= 500) return 'it failed on its side; try again later';
  return 'it refused the request';
}
