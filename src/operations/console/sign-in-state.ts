// What the console's OpenID Connect sign-in keeps between the redirect to the provider and the
// callback (state, nonce, PKCE verifier, the redirect URI used), in one signed HttpOnly cookie scoped
// to the OIDC paths, and the one-time ticket cookie the callback hands the console page.
import type { IncomingMessage } from 'node:http';
import { installationSecret } from '../../agents/secrets';
import type { GatewayConfig } from '../../config/types';
import { readCookie, setCookie, signValue, verifySigned } from '../../console/cookies';
import { publicBaseUrl, requestBaseUrl } from '../../files/share-link';
import type { Store } from '../../store/port';

export const STATE_COOKIE = 'agw_console_oidc';
export const TICKET_COOKIE = 'agw_console_ticket';
const STATE_PURPOSE = 'console-oidc-state';
const STATE_PATH = '/console/auth/oidc';
export const TICKET_PATH = '/console/auth';
/** How long a sign-in at the provider may take (the state cookie's lifetime), in seconds. */
export const SIGN_IN_WINDOW_SECONDS = 600;
/** How long the console page has to exchange its ticket (the contract's 60 s). */
export const TICKET_SECONDS = 60;
/** Sign-in failures the console page is sent back with (`/console/?signInError=<code>`); it words them. */
export type SignInError = 'not_configured' | 'provider_unavailable' | 'provider_error' | 'invalid_state' | 'sign_in_failed' | 'unknown_user' | 'rate_limited';

export interface SignInState {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  /** Epoch milliseconds after which the callback is refused. */
  expiresAt: number;
}

/** The callback URL registered at the provider: configured, else below the gateway's public address. */
export function redirectUriFor(config: GatewayConfig, req: IncomingMessage): string {
  const configured = config.console.oidc?.redirectUrl;
  if (configured !== undefined) return configured;
  return `${publicBaseUrl(config.server, requestBaseUrl(req, config.server.trustProxy))}/console/auth/oidc/callback`;
}

/** Cookies are Secure when the browser reaches us over HTTPS (then it sends them over HTTPS only). */
export function secureFor(url: string): boolean {
  return url.startsWith('https://');
}

export async function stateCookie(store: Store, state: SignInState): Promise<string> {
  const value = signValue(await installationSecret(store, 'console-cookie-secret'), STATE_PURPOSE, state);
  return setCookie(STATE_COOKIE, value, { path: STATE_PATH, maxAge: SIGN_IN_WINDOW_SECONDS, secure: secureFor(state.redirectUri) });
}

export function clearStateCookie(secure: boolean): string {
  return setCookie(STATE_COOKIE, '', { path: STATE_PATH, maxAge: 0, secure });
}

/** The sign-in state this installation signed and sent with this browser, unexpired at `now`; else null. */
export async function readSignInState(store: Store, req: IncomingMessage, now: number): Promise<SignInState | null> {
  const raw = readCookie(req.headers, STATE_COOKIE);
  if (raw === undefined) return null;
  const value = verifySigned(await installationSecret(store, 'console-cookie-secret'), STATE_PURPOSE, raw) as Partial<SignInState> | null;
  if (!value || typeof value !== 'object') return null;
  const { state, nonce, codeVerifier, redirectUri, expiresAt } = value;
  if (typeof state !== 'string' || typeof nonce !== 'string' || typeof codeVerifier !== 'string' || typeof redirectUri !== 'string') return null;
  if (typeof expiresAt !== 'number' || expiresAt <= now) return null;
  return { state, nonce, codeVerifier, redirectUri, expiresAt };
}

export function ticketCookie(ticket: string, secure: boolean): string {
  return setCookie(TICKET_COOKIE, ticket, { path: TICKET_PATH, maxAge: TICKET_SECONDS, secure });
}

export function clearTicketCookie(secure: boolean): string {
  return setCookie(TICKET_COOKIE, '', { path: TICKET_PATH, maxAge: 0, secure });
}

/** Where the browser goes after the callback: the console, on the origin the callback was reached at. */
export function consoleUrl(redirectUri: string | null, error?: SignInError): string {
  const path = error === undefined ? '/console/' : `/console/?signInError=${error}`;
  return redirectUri === null ? path : new URL(path, redirectUri).href;
}
