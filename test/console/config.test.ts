// The `console` configuration block: defaults, the OIDC settings' limits, the sign-in rate limit, and the uniqueness of the
// identities a sign-in maps to a user (one ID token, one user).
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/load';
import { baseConfigDocument, testConfig } from '../helpers/config';

const OIDC = { issuer: 'https://login.example.com', clientId: 'gw', clientSecret: 'very-secret' };

function problems(patch: Record<string, unknown>): string[] {
  try {
    testConfig(patch);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

function withUsers(acme: Record<string, unknown>[], other: Record<string, unknown>[] = []): Record<string, unknown>[] {
  const orgs = baseConfigDocument()['organizations'] as Record<string, unknown>[];
  return [
    { ...orgs[0], groups: [], users: acme },
    { ...orgs[1], users: other },
  ];
}

describe('console configuration', () => {
  it('defaults to no OIDC, 12-hour sessions and 30 sign-in requests a minute per address; scopes default to "openid email profile"', () => {
    const plain = testConfig();
    assert.deepEqual(plain.console, { sessionTtlSeconds: 43200, signInRateLimit: 30 });
    const config = testConfig({ console: { oidc: OIDC } });
    assert.deepEqual(config.console.oidc, { ...OIDC, scopes: 'openid email profile' });
  });

  it('requires issuer, client id and secret, an openid scope, and http(s) URLs', () => {
    assert.ok(problems({ console: { oidc: { issuer: OIDC.issuer, clientId: 'gw' } } }).some((p) => p.includes('console.oidc.clientSecret')));
    assert.ok(problems({ console: { oidc: { ...OIDC, scopes: 'email profile' } } }).some((p) => p.includes('console.oidc.scopes')));
    assert.ok(problems({ console: { oidc: { ...OIDC, issuer: 'ftp://login.example.com' } } }).some((p) => p.includes('console.oidc.issuer')));
    assert.ok(problems({ console: { sessionTtlSeconds: 10 } }).some((p) => p.includes('console.sessionTtlSeconds')));
  });

  it('takes signInRateLimit as a whole number of requests a minute, 0 switching the limit off', () => {
    assert.equal(testConfig({ console: { signInRateLimit: 0 } }).console.signInRateLimit, 0);
    assert.equal(testConfig({ console: { signInRateLimit: 5 } }).console.signInRateLimit, 5);
    for (const wrong of [-1, 2.5, 'many']) {
      assert.ok(
        problems({ console: { signInRateLimit: wrong } }).some((p) => p.includes('console.signInRateLimit')),
        String(wrong),
      );
    }
  });

  it('refuses an oidcSubject or an email (in any case) given to two users, across organizations', () => {
    const found = problems({
      organizations: withUsers(
        [
          { id: 'a', oidcSubject: 'same', email: 'Ann@example.com' },
          { id: 'b', oidcSubject: 'same' },
        ],
        [{ id: 'c', email: 'ann@EXAMPLE.com' }],
      ),
    });
    assert.ok(found.some((p) => p.includes('organizations[0].users[1].oidcSubject') && p.includes('organizations[0].users[0].oidcSubject')));
    assert.ok(found.some((p) => p.includes('organizations[1].users[0].email') && p.includes('organizations[0].users[0].email')));
    assert.deepEqual(
      problems({
        organizations: withUsers([
          { id: 'a', oidcSubject: 's1', email: 'a@example.com' },
          { id: 'b', oidcSubject: 's2' },
        ]),
      }),
      [],
    );
  });
});
