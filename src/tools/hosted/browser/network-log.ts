// The network requests of one conversation's browser context, as the model lists and exports them
// (svc_browser_list_network_requests, svc_browser_export_request_as_curl). Bounded: the newest
// tools.browser.maxCapturedRequests are kept, and a request body only up to maxPostDataBytes.
// Headers include cookies and authorization (an export must reproduce the request): they stay in
// memory and in tool outputs, never in a log line.
import type { BrowserContext, Request } from 'playwright-core';

/** Longest wait for a request's final headers (cookies included) after its response arrived. */
const HEADERS_WAIT_MS = 2_000;

export interface CapturedRequest {
  id: number;
  method: string;
  url: string;
  resourceType: string;
  /** Lower-case names; the headers sent (cookie included) once the response came, else those the page asked for. */
  headers: Record<string, string>;
  /** The body, when there was one and it was kept (not longer than maxPostDataBytes). */
  postData: Buffer | null;
  /** The body's size in bytes, kept or not (0: none). */
  postDataSize: number;
  status: number | null;
  /** Why the request did not complete (refused by the guard, a network error). */
  failure: string | null;
  /** Settles when the final headers are known (or given up on). */
  settled: Promise<void>;
}

export interface NetworkFilter {
  /** Text the URL must contain (case-insensitive). */
  text?: string;
  /** Playwright resource type: document, xhr, fetch, script, image, … */
  resourceType?: string;
  method?: string;
}

export class NetworkLog {
  private readonly entries: CapturedRequest[] = [];
  private readonly byRequest = new WeakMap<Request, CapturedRequest>();
  private nextId = 1;

  constructor(
    private readonly maxEntries: number,
    private readonly maxPostDataBytes: number,
  ) {}

  attach(context: BrowserContext): void {
    context.on('request', (request) => this.onRequest(request));
    context.on('response', (response) => {
      const entry = this.byRequest.get(response.request());
      if (!entry) return;
      entry.status = response.status();
      entry.settled = Promise.race([
        response
          .request()
          .allHeaders()
          .then((headers) => {
            entry.headers = headers;
          }),
        new Promise<void>((resolve) => setTimeout(resolve, HEADERS_WAIT_MS).unref()),
      ]).catch(() => undefined);
    });
    context.on('requestfailed', (request) => {
      const entry = this.byRequest.get(request);
      if (entry && entry.failure === null) entry.failure = request.failure()?.errorText ?? 'failed';
    });
  }

  /** The entry of a request (made by 'request', which Playwright emits before routing it). */
  entryOf(request: Request): CapturedRequest | undefined {
    return this.byRequest.get(request);
  }

  get(id: number): CapturedRequest | undefined {
    return this.entries.find((entry) => entry.id === id);
  }

  /** The highest id handed out so far (0: none). */
  get lastId(): number {
    return this.nextId - 1;
  }

  get size(): number {
    return this.entries.length;
  }

  list(filter: NetworkFilter = {}): CapturedRequest[] {
    const text = filter.text?.toLowerCase();
    const type = filter.resourceType?.toLowerCase();
    const method = filter.method?.toUpperCase();
    return this.entries.filter(
      (entry) =>
        (text === undefined || entry.url.toLowerCase().includes(text)) &&
        (type === undefined || entry.resourceType === type) &&
        (method === undefined || entry.method === method),
    );
  }

  private onRequest(request: Request): void {
    const url = request.url();
    // Inline data is not a network request, and its URL can be megabytes long.
    if (url.startsWith('data:') || url.startsWith('blob:')) return;
    const body = request.postDataBuffer();
    const entry: CapturedRequest = {
      id: this.nextId++,
      method: request.method(),
      url,
      resourceType: request.resourceType(),
      headers: request.headers(),
      postData: body && body.length <= this.maxPostDataBytes ? body : null,
      postDataSize: body?.length ?? 0,
      status: null,
      failure: null,
      settled: Promise.resolve(),
    };
    this.byRequest.set(request, entry);
    this.entries.push(entry);
    if (this.entries.length > this.maxEntries) this.entries.shift();
  }
}

/** One line per request, for the model: id, method, status, type, URL (cut), and why it failed. */
export function describeRequest(entry: CapturedRequest): string {
  const status = entry.status ?? (entry.failure !== null ? 'failed' : 'pending');
  const url = entry.url.length > 300 ? `${entry.url.slice(0, 300)}…` : entry.url;
  const body = entry.postDataSize > 0 ? ` (body ${entry.postDataSize} bytes)` : '';
  const failure = entry.failure !== null ? ` — ${entry.failure}` : '';
  return `#${entry.id} ${entry.method} ${status} ${entry.resourceType} ${url}${body}${failure}`;
}
