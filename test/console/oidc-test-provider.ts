// A real OpenID Connect provider (the oidc-provider package) for the console sign-in tests, on a random
// port, with its development login and consent pages (any login name is the account's subject), and a
// browser-like HTTP client that follows redirects, keeps cookies per host and submits those pages.
import type { AddressInfo } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface TestAccount {
  email?: string;
  emailVerified?: boolean;
}

export interface TestProvider {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Starts answering as a provider whose one client redirects to `redirectUri`. */
  configure(redirectUri: string, accounts: Record<string, TestAccount>): Promise<void>;
  close(): Promise<void>;
}

/** Listens first (the gateway's config needs the issuer), configured once the gateway's address is known. */
export async function startTestProvider(): Promise<TestProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const server: Server = createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'agent-gateway-console';
  const clientSecret = 'test-client-secret-9f8e7d6c5b4a39281706f5e4d3c2b1a0';
  return {
    issuer,
    clientId,
    clientSecret,
    async configure(redirectUri, accounts) {
      const { default: Provider } = await import('oidc-provider');
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: clientId,
            client_secret: clientSecret,
            redirect_uris: [redirectUri],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        // The ID token carries the scopes' claims (as Google's, Microsoft's and Keycloak's do).
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        features: { devInteractions: { enabled: true } },
        cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
        findAccount: (_ctx: unknown, sub: string) => {
          const account = accounts[sub] ?? {};
          return {
            accountId: sub,
            claims: () => ({
              sub,
              ...(account.email === undefined ? {} : { email: account.email, email_verified: account.emailVerified ?? false }),
            }),
          };
        },
      });
      handler = provider.callback();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A minimal browser: cookies per host (as browsers keep them, whatever the port), redirects followed by hand. */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  /** One request, no redirect followed; Set-Cookie headers kept (Max-Age=0 deletes). */
  async request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Response> {
    const target = new URL(url);
    const cookies = [...(this.jar.get(target.hostname) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
    const headers: Record<string, string> = { ...(init.headers ?? {}), ...(cookies ? { cookie: cookies } : {}) };
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(url, {
      method: init.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      redirect: 'manual',
      ...(body === undefined ? {} : { body }),
    });
    const jar = this.jar.get(target.hostname) ?? new Map<string, string>();
    this.jar.set(target.hostname, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const deleted = value === '' || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (deleted) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }

  /**
   * Follows redirects from `url`, submitting the provider's login form (as `login`) and consent form
   * on the way, until a response that is not a redirect or a URL `stopAt` accepts. `rewrite` may
   * change a URL before it is requested (a tampering client). Returns the last URL and its response.
   */
  async follow(url: string, options: { login: string; stopAt?: (url: URL) => boolean; rewrite?: (url: URL) => URL }): Promise<{ url: string; res: Response }> {
    let current = url;
    let res: Response | null = null;
    let form: Record<string, string> | undefined;
    for (let hop = 0; hop < 20; hop++) {
      const target = options.rewrite ? options.rewrite(new URL(current)) : new URL(current);
      if (options.stopAt?.(target)) return { url: target.href, res: res ?? (await this.request(target.href)) };
      res = await this.request(target.href, form ? { form } : {});
      form = undefined;
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        current = new URL(location, target).href;
        continue;
      }
      const html = await res.text();
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1];
      if (res.status !== 200 || !action || !prompt) return { url: target.href, res: new Response(html, { status: res.status, headers: res.headers }) };
      current = new URL(action.replace(/&amp;/g, '&'), target).href;
      form = prompt === 'login' ? { prompt, login: options.login, password: 'any' } : { prompt };
    }
    throw new Error('too many redirects');
  }
}
