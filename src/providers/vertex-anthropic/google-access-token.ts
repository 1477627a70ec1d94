// OAuth 2.0 access tokens for a Google service account (RFC 7523 JWT bearer grant, as Google documents
// in "Using OAuth 2.0 for Server to Server Applications"): a JWT signed RS256 with the key's private_key,
// {iss: client_email, scope, aud: token URL, iat, exp ≤ iat + 1 h}, POSTed as
// grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<jwt> to the token URL, which
// answers {access_token, expires_in}. The token is cached until shortly before it expires; concurrent
// callers share one exchange.
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { GatewayError } from '../../http/errors';
import type { UpstreamTransport } from '../http/transport';
import type { ServiceAccountKey } from './load-service-account-key';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const JWT_LIFETIME_S = 3600;
/** Renew this long before expiry: a token must not expire between the cache check and the upstream call. */
const EXPIRY_MARGIN_MS = 60_000;

const base64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

export interface TokenSourceOptions {
  providerName: string;
  loadKey: () => Promise<ServiceAccountKey>;
  /** Overrides the key's token_uri (tests, private endpoints). */
  tokenUrl: string | undefined;
  transport: UpstreamTransport;
  now?: () => number;
}

export class GoogleAccessTokenSource {
  private cached: { token: string; expiresAt: number } | null = null;
  private inflight: Promise<string> | null = null;
  private key: Promise<{ key: ServiceAccountKey; privateKey: KeyObject; tokenUrl: string }> | null = null;
  private readonly now: () => number;

  constructor(private readonly options: TokenSourceOptions) {
    this.now = options.now ?? Date.now;
  }

  /** A valid access token (cached, or freshly exchanged). */
  get(signal?: AbortSignal): Promise<string> {
    if (this.cached && this.now() < this.cached.expiresAt - EXPIRY_MARGIN_MS) return Promise.resolve(this.cached.token);
    this.inflight ??= this.exchange(signal).finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /** Drops the cached token (the upstream refused it: revoked or rotated). */
  invalidate(): void {
    this.cached = null;
  }

  private loadKey(): Promise<{ key: ServiceAccountKey; privateKey: KeyObject; tokenUrl: string }> {
    this.key ??= this.options.loadKey().then((key) => ({
      key,
      privateKey: createPrivateKey(key.private_key),
      tokenUrl: this.options.tokenUrl ?? key.token_uri ?? GOOGLE_TOKEN_URL,
    }));
    // A failed load is retried on the next call (the file may appear), not cached forever.
    this.key.catch(() => {
      this.key = null;
    });
    return this.key;
  }

  private async exchange(signal: AbortSignal | undefined): Promise<string> {
    const { key, privateKey, tokenUrl } = await this.loadKey();
    const issuedAt = Math.floor(this.now() / 1000);
    const header = { alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) };
    const claims = { iss: key.client_email, scope: CLOUD_PLATFORM_SCOPE, aud: tokenUrl, iat: issuedAt, exp: issuedAt + JWT_LIFETIME_S };
    const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
    const jwt = `${unsigned}.${base64url(sign('sha256', Buffer.from(unsigned), privateKey))}`;
    const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: jwt }).toString();
    let reply: unknown;
    try {
      const response = await this.options.transport.send({
        url: tokenUrl,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form,
        ...(signal ? { signal } : {}),
      });
      reply = await response.json();
    } catch (err) {
      if (signal?.aborted) throw err;
      // The caller's request was fine: a failed exchange is the gateway's upstream problem (502).
      const detail = err instanceof Error ? err.message : 'unknown error';
      throw new GatewayError('upstream_error', `Upstream provider ${this.options.providerName}: the service-account token exchange failed (${detail})`, {
        cause: err,
      });
    }
    const { access_token: token, expires_in: expiresIn } = (reply ?? {}) as { access_token?: unknown; expires_in?: unknown };
    if (typeof token !== 'string' || token === '') {
      throw new GatewayError('upstream_error', `Upstream provider ${this.options.providerName}: the token endpoint answered without an access_token.`);
    }
    const lifetimeS = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn : JWT_LIFETIME_S;
    this.cached = { token, expiresAt: this.now() + lifetimeS * 1000 };
    return token;
  }
}

/** Google OAuth errors read `{error: "invalid_grant", error_description: "..."}`. */
export function googleOAuthErrorMapper(providerName: string) {
  return (status: number, bodyText: string): { message: string } => {
    try {
      const parsed = JSON.parse(bodyText) as { error?: unknown; error_description?: unknown };
      if (typeof parsed.error === 'string') {
        const description = typeof parsed.error_description === 'string' ? `: ${parsed.error_description}` : '';
        return { message: `token endpoint answered HTTP ${status} ${parsed.error}${description}` };
      }
    } catch {
      // not JSON
    }
    return { message: `token endpoint of ${providerName} answered HTTP ${status}` };
  };
}
