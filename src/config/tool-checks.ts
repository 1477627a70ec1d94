// Checks of the hosted tools' per-organization settings that the schema cannot express: an egress
// profile's proxy URL (whose credentials must never be echoed into a problem line, so the schema only
// says "a string" and this check reports without the value) and what each web search provider needs.
import type { CheckInput, ConfigCheck } from './cross-checks';
import type { ConfigProblem } from './problems';

/** Proxy schemes an egress profile may use (src/tools/egress-proxy.ts serves each). */
export const EGRESS_PROXY_PROTOCOLS: readonly string[] = ['http:', 'https:', 'socks5:', 'socks5h:'];

type Node = Record<string, unknown>;
const node = (value: unknown): Node => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Node) : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function organizationTools(input: CheckInput): Array<{ index: number; tools: Node }> {
  return list(input.doc['organizations']).map((org, index) => ({ index, tools: node(node(org)['tools']) }));
}

/** What is wrong with a proxy URL, in words that never repeat it (it may hold a password). */
export function egressProxyProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (!EGRESS_PROXY_PROTOCOLS.includes(url.protocol)) return `uses the scheme ${url.protocol.slice(0, 20)}, not one of http, https, socks5, socks5h`;
  if (url.hostname === '') return 'names no host';
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '')
    return 'has a path, query or fragment (a proxy URL is scheme://[user:password@]host:port)';
  return null;
}

export const egressProfileUrls: ConfigCheck = (input) =>
  organizationTools(input).flatMap(({ index, tools }) =>
    Object.entries(node(tools['egressProfiles'])).flatMap(([name, profile]): ConfigProblem[] => {
      const url = node(profile)['url'];
      if (typeof url !== 'string' || url === '') return []; // the schema reports it
      const problem = egressProxyProblem(url);
      if (problem === null) return [];
      return [
        {
          path: `organizations[${index}].tools.egressProfiles.${name}.url`,
          message: `the proxy URL ${problem}`,
          fix: 'write http://host:port, https://host:port or socks5://host:port, with user:password@ before the host when the proxy needs them',
        },
      ];
    }),
  );

export const webSearchSettings: ConfigCheck = (input) =>
  organizationTools(input).flatMap(({ index, tools }): ConfigProblem[] => {
    const search = node(tools['webSearch']);
    const provider = search['provider'];
    if (typeof provider !== 'string') return [];
    const at = `organizations[${index}].tools.webSearch`;
    const problems: ConfigProblem[] = [];
    if (provider === 'searxng' && search['url'] === undefined) {
      problems.push({
        path: `${at}.url`,
        message: 'is required for searxng (there is no public default instance)',
        fix: 'the base URL of your SearxNG instance',
      });
    }
    if ((provider === 'brave' || provider === 'tavily') && (search['apiKey'] === undefined || search['apiKey'] === '')) {
      problems.push({
        path: `${at}.apiKey`,
        message: `is required for ${provider}`,
        fix: `set it from the environment, e.g. apiKey: \${${provider.toUpperCase()}_API_KEY}`,
      });
    }
    const url = search['url'];
    if (typeof url === 'string') {
      let parsed: URL | null = null;
      try {
        parsed = new URL(url);
      } catch {
        parsed = null;
      }
      if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
        problems.push({ path: `${at}.url`, message: 'is not an http or https URL', fix: 'the base URL of the search API, such as https://search.example.org' });
      }
    }
    return problems;
  });
