// The console's API client: openapi-fetch typed by the types openapi-typescript generates from the
// gateway's OpenAPI document (`npm run generate` writes ./generated/api.d.ts). No response type here is
// written by hand: every shape comes from the document.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './generated/api';

export type Schemas = components['schemas'];

type Json<R> = R extends { content: { 'application/json': infer J } } ? J : never;
/** The JSON body of an operation's success answer (200 or 201), as the document defines it. */
export type Ok<P extends keyof paths, M extends 'get' | 'post' | 'delete'> =
  paths[P] extends Record<M, { responses: infer R }> ? Json<R[Extract<keyof R, 200 | 201>]> : never;

// The credential (an API key, or the bearer token of an SSO session) lives in session storage only:
// gone when the tab closes, never put in a URL, never logged.
const TOKEN = 'agw.console.token';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN);
  } catch {
    return null;
  }
}

const VIA = 'agw.console.via';

/** `via`: an API key typed in, or the token of an SSO session (ended on the gateway at sign-out). */
export function storeToken(token: string | null, via: 'key' | 'sso' = 'key'): void {
  if (token === null) {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(VIA);
  } else {
    sessionStorage.setItem(TOKEN, token);
    sessionStorage.setItem(VIA, via);
  }
}

export function signedInVia(): 'key' | 'sso' {
  return sessionStorage.getItem(VIA) === 'sso' ? 'sso' : 'key';
}

/** Listeners told when the gateway refuses the credential (401): the app goes back to sign-in. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = storedToken();
    if (token !== null && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ response, request }) {
    if (response.status === 401 && request.headers.has('authorization')) for (const listener of unauthorizedListeners) listener();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);

/** An API answer that is not a success, with the message the gateway gave (any of its envelopes). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function messageOf(error: unknown, status: number): string {
  if (typeof error === 'object' && error !== null) {
    const record = error as Record<string, unknown>;
    if (typeof record['message'] === 'string') return record['message'];
    const inner = record['error'];
    if (typeof inner === 'object' && inner !== null && typeof (inner as Record<string, unknown>)['message'] === 'string') {
      return (inner as Record<string, string>)['message'] ?? `HTTP ${status}`;
    }
  }
  return `HTTP ${status}`;
}

/** The data of a successful call, or an ApiError carrying the gateway's message. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) {
    if (response.ok && response.status === 204) return undefined as T;
    throw new ApiError(response.status, messageOf(error, response.status));
  }
  return data;
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (HTTP ${error.status})`;
  return error instanceof Error ? error.message : String(error);
}
