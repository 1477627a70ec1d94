// The hosted web tools' settings: defaults, and the checks the schema cannot express (a proxy URL's
// scheme, reported without its credentials; what each search provider needs).
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { ConfigError, parseConfig } from '../../src/config/load';
import { baseConfigDocument, testConfig } from '../helpers/config';

function withAcmeTools(tools: Record<string, unknown>): Record<string, unknown> {
  const doc = baseConfigDocument();
  const organizations = doc['organizations'] as Record<string, unknown>[];
  organizations[0] = { ...organizations[0], tools };
  return doc;
}

function problemsOf(doc: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(stringify(doc), env, 'test');
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail('expected the config to be rejected');
}

describe('configuration: hosted web tools', () => {
  it('defaults: downloads of at most 50 MiB within 2 minutes, no egress profiles, no web search', () => {
    const config = testConfig();
    assert.deepEqual(config.tools.webDownload, { maxBytes: 50 * 1024 * 1024, timeoutMs: 120_000 });
    const acme = config.organizations.find((o) => o.id === 'acme')!;
    assert.deepEqual(acme.tools.egressProfiles, {});
    assert.equal(acme.tools.webSearch, undefined);
  });

  it('accepts http, https and socks5 proxies, and a search provider with what it needs (the key from the environment)', () => {
    const doc = withAcmeTools({
      egressProfiles: {
        office: { url: 'http://user:pa%40ss@proxy.internal:3128', description: 'Office' },
        tls: { url: 'https://proxy.internal:443' },
        socks: { url: 'socks5h://proxy.internal:1080' },
      },
      webSearch: { provider: 'brave', apiKey: '${BRAVE_API_KEY}' },
    });
    const config = parseConfig(stringify(doc), { BRAVE_API_KEY: 'BSA-from-env' }, 'test');
    const acme = config.organizations.find((o) => o.id === 'acme')!;
    assert.deepEqual(Object.keys(acme.tools.egressProfiles), ['office', 'tls', 'socks']);
    assert.deepEqual(acme.tools.webSearch, { provider: 'brave', apiKey: 'BSA-from-env', timeoutMs: 15_000 });
  });

  it('rejects a proxy URL of another scheme, or with a path, without repeating its credentials', () => {
    const problems = problemsOf(
      withAcmeTools({
        egressProfiles: {
          ftp: { url: 'ftp://user:hunter2-secret@proxy.internal:21' },
          pathy: { url: 'http://user:hunter2-secret@proxy.internal:3128/some/path' },
          junk: { url: 'not a url hunter2-secret' },
        },
      }),
    );
    assert.deepEqual(
      problems.filter((p) => p.includes('egressProfiles')).map((p) => p.replace(/ \(fix: .*\)$/, '')),
      [
        'organizations[0].tools.egressProfiles.ftp.url: the proxy URL uses the scheme ftp:, not one of http, https, socks5, socks5h',
        'organizations[0].tools.egressProfiles.pathy.url: the proxy URL has a path, query or fragment (a proxy URL is scheme://[user:password@]host:port)',
        'organizations[0].tools.egressProfiles.junk.url: the proxy URL is not a URL',
      ],
    );
    assert.ok(!problems.join('\n').includes('hunter2'), problems.join('\n'));
  });

  it('rejects a profile name that is not a plain identifier', () => {
    const problems = problemsOf(withAcmeTools({ egressProfiles: { 'has space': { url: 'http://proxy.internal:3128' } } }));
    assert.ok(
      problems.some((p) => p.startsWith('organizations[0].tools.egressProfiles')),
      problems.join('\n'),
    );
  });

  it('requires a URL for searxng and a key for brave and tavily; the URL must be http(s)', () => {
    const problemsFor = (webSearch: Record<string, unknown>): string[] => problemsOf(withAcmeTools({ webSearch })).filter((p) => p.includes('webSearch'));
    assert.deepEqual(
      problemsFor({ provider: 'searxng' }).map((p) => p.replace(/ \(fix: .*\)$/, '')),
      ['organizations[0].tools.webSearch.url: is required for searxng (there is no public default instance)'],
    );
    assert.match(problemsFor({ provider: 'tavily' })[0] ?? '', /^organizations\[0\]\.tools\.webSearch\.apiKey: is required for tavily \(fix: .*TAVILY_API_KEY/);
    assert.match(problemsFor({ provider: 'brave', apiKey: 'k', url: 'ftp://x' })[0] ?? '', /webSearch\.url: is not an http or https URL/);
    assert.match(problemsFor({ provider: 'bing' }).join('\n'), /webSearch\.provider: must be one of "searxng", "brave", "tavily"/);
  });

  it('an egress profile and web search are per organization: another one has none', () => {
    const config = parseConfig(stringify(withAcmeTools({ egressProfiles: { office: { url: 'http://proxy.internal:3128' } } })), {}, 'test');
    assert.deepEqual(config.organizations.find((o) => o.id === 'other')!.tools.egressProfiles, {});
  });
});
