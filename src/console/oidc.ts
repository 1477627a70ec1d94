// Sign-in with the configured OpenID Connect provider through openid-client (authorization code flow,
// PKCE S256, state and nonce). The provider's metadata is discovered on first use and kept; a failed
// discovery is not kept, so the next sign-in tries again. ID tokens are checked by openid-client:
// issuer, audience (and azp), nonce, expiry and issue time, and, with non-repudiation checks on, the
// signature against the provider's JWKS (fetched from its jwks_uri and cached by the library).
import type { ConsoleOidcConfig } from '../config/types';

type OpenIdClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });
type Discovered = { lib: OpenIdClient; config: InstanceType<OpenIdClient['Configuration']> };

/** How long one request to the provider (discovery, token endpoint, JWKS) may take, in seconds. */
const PROVIDER_TIMEOUT_SECONDS = 10;

export interface AuthorizationRequest {
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface VerifiedIdentity {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
}

export class OidcSignIn {
  private configuration: Promise<Discovered> | null = null;

  constructor(private readonly settings: ConsoleOidcConfig) {}

  private discovered(): Promise<Discovered> {
    this.configuration ??= (async () => {
      // An ES module: loaded when the console's sign-in is first used, never at boot.
      const lib = await import('openid-client');
      const insecure = this.settings.issuer.startsWith('http://');
      const config = await lib.discovery(new URL(this.settings.issuer), this.settings.clientId, undefined, lib.ClientSecretBasic(this.settings.clientSecret), {
        // Plain HTTP only when the operator configured an http:// issuer (a test provider).
        execute: insecure ? [lib.allowInsecureRequests] : [],
        timeout: PROVIDER_TIMEOUT_SECONDS,
      });
      lib.enableNonRepudiationChecks(config);
      return { lib, config };
    })();
    this.configuration.catch(() => {
      this.configuration = null;
    });
    return this.configuration;
  }

  /** The provider's authorization URL for a fresh state, nonce and PKCE verifier (the caller keeps them). */
  async authorizationRequest(redirectUri: string): Promise<AuthorizationRequest> {
    const { lib, config } = await this.discovered();
    const codeVerifier = lib.randomPKCECodeVerifier();
    const state = lib.randomState();
    const nonce = lib.randomNonce();
    const url = lib.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes,
      response_type: 'code',
      code_challenge: await lib.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, state, nonce, codeVerifier };
  }

  /**
   * Exchanges the authorization response (the callback URL as the provider sent the browser to it) for
   * tokens and returns the ID token's verified claims. Throws on any mismatch (state, nonce, issuer,
   * audience, signature, expiry) and on errors the provider reports.
   */
  async complete(callbackUrl: URL, expected: { state: string; nonce: string; codeVerifier: string }): Promise<VerifiedIdentity> {
    const { lib, config } = await this.discovered();
    const tokens = await lib.authorizationCodeGrant(config, callbackUrl, {
      expectedState: expected.state,
      expectedNonce: expected.nonce,
      pkceCodeVerifier: expected.codeVerifier,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new Error('the token response held no ID token');
    return claims;
  }
}

const instances = new WeakMap<ConsoleOidcConfig, OidcSignIn>();

/** One sign-in client per configuration (its discovered metadata and JWKS cache shared by every request). */
export function oidcSignIn(settings: ConsoleOidcConfig): OidcSignIn {
  let instance = instances.get(settings);
  if (!instance) {
    instance = new OidcSignIn(settings);
    instances.set(settings, instance);
  }
  return instance;
}
