// Custom DLP patterns run on RE2 (linear time): `config check` and start-up refuse a pattern RE2
// cannot run (lookaround, backreferences), naming its path and why; patterns that backtrack
// catastrophically on V8 are accepted, since RE2 runs them in linear time.
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { ConfigError, parseConfig } from '../../src/config/load';
import { baseConfigDocument } from '../helpers/config';

function withCustomPatterns(patterns: string[]): string {
  const doc = baseConfigDocument();
  const orgs = doc['organizations'] as Record<string, unknown>[];
  orgs[0]!['dlp'] = { enabled: true, custom: patterns.map((pattern, i) => ({ name: `p${i}`, pattern })) };
  return stringify(doc);
}

describe('config: custom DLP patterns', () => {
  it('refuses lookaround and backreferences (not linear-time), naming each path and the reason', () => {
    let problems: string[] = [];
    try {
      parseConfig(withCustomPatterns(['EMP-\\d{6}', '(?<!x)secret', '(\\w+)-\\1', 'code(?=\\d)']), {}, 'test');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      problems = err.problems;
    }
    const dlp = problems.filter((p) => p.includes('.dlp.custom['));
    assert.deepEqual(
      dlp.map((p) => p.slice(0, p.indexOf(':'))),
      ['organizations[0].dlp.custom[1].pattern', 'organizations[0].dlp.custom[2].pattern', 'organizations[0].dlp.custom[3].pattern'],
    );
    for (const problem of dlp) assert.match(problem, /not a linear-time \(RE2\) pattern/);
  });

  it('accepts patterns that backtrack catastrophically on V8 (RE2 runs them in linear time)', () => {
    const config = parseConfig(withCustomPatterns(['(a+)+$', '(a|aa)*b', 'EMP-\\d{6}']), {}, 'test');
    assert.equal(config.organizations[0]?.dlp?.custom.length, 3);
  });
});
