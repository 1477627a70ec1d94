// Retry-After (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) and OpenAI's retry-after-ms, parsed
// into a number before anything of the upstream's reaches our response: a header value is never copied
// (a control byte in it made setHeader throw inside the error path and took the process down).

/** Longest delay accepted from an upstream (a day): larger numbers are nonsense, not a plan. */
const MAX_DELAY_SECONDS = 86_400;
const DELAY_SECONDS = /^\d{1,9}$/;
const DELAY_MS = /^\d{1,12}(?:\.\d+)?$/;
/** An HTTP-date in any of its three forms (RFC 9110 §5.6.7) is printable ASCII of modest length. */
const DATE_TEXT = /^[\x20-\x7e]{1,64}$/;

type IncomingHttpHeaders = Record<string, string | string[] | undefined>;

function first(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The upstream's requested delay in ms, or null when it sent none or nothing that parses. */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | null {
  const ms = first(headers, 'retry-after-ms')?.trim();
  if (ms !== undefined && DELAY_MS.test(ms)) return Math.min(Math.ceil(Number(ms)), MAX_DELAY_SECONDS * 1000);
  const value = first(headers, 'retry-after')?.trim();
  if (value === undefined) return null;
  if (DELAY_SECONDS.test(value)) return Math.min(Number(value), MAX_DELAY_SECONDS) * 1000;
  if (!DATE_TEXT.test(value)) return null;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.min(Math.max(0, date - now), MAX_DELAY_SECONDS * 1000);
}

/** The Retry-After we send our caller: whole seconds, made by us from the parsed delay. */
export function retryAfterHeader(delayMs: number): string {
  return String(Math.ceil(delayMs / 1000));
}
