import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { ConfigError, parseConfig, resolveConfigPath } from '../../src/config/load';
import { interpolateString } from '../../src/config/interpolate';
import { baseConfigDocument, mergeConfig } from '../helpers/config';

const root = path.resolve(__dirname, '../..');
const defaultYaml = readFileSync(path.join(root, 'config/gateway.yaml'), 'utf8');

function problemsOf(doc: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(stringify(doc), env, 'test');
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.problems;
  }
  assert.fail('expected the config to be rejected');
}

describe('configuration', () => {
  describe('the default config/gateway.yaml', () => {
    it('serves the demo model and agent offline with no provider keys', () => {
      const config = parseConfig(defaultYaml, {});
      assert.deepEqual(Object.keys(config.providers), ['demo']);
      assert.deepEqual(
        config.models.map((m) => m.id),
        ['demo'],
      );
      assert.equal(config.store.driver, 'embedded');
      assert.equal(config.store.path, './data');
      assert.equal(config.queue.driver, 'inline');
      assert.equal(config.queue.prefix, 'agw');
      assert.equal(config.logging.level, 'info');
      assert.equal(config.plugins['auth']?.enabled, true, 'the default file authenticates every call');
      assert.equal(config.server.port, 8080);
      assert.equal(config.server.host, '127.0.0.1');
      const agent = config.agents[0]!;
      assert.equal(agent.model, 'demo');
      assert.equal(agent.inputs.length, 1);
      assert.equal(agent.steps.length, 2);
      assert.equal(agent.steps.filter((s) => s.objective).length, 1);
      // No key configured: the first start creates and prints one.
      assert.deepEqual(config.organizations[0]!.users[0]!.keys, []);
    });

    it('switches the openai and anthropic providers on when their key variables are set', () => {
      const config = parseConfig(defaultYaml, { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' });
      assert.deepEqual(Object.keys(config.providers).sort(), ['claude', 'demo', 'openai']);
      assert.equal(config.providers['openai']!.apiKey, 'sk-test');
      assert.deepEqual(config.models.map((m) => m.id).sort(), ['claude-sonnet-4-5', 'demo', 'gpt-4o-mini']);
    });

    it('reads GATEWAY_ADMIN_KEY as the admin user key, and PORT / HOST override the server address', () => {
      const config = parseConfig(defaultYaml, { GATEWAY_ADMIN_KEY: 'agw_fixed_admin_key', PORT: '9191', HOST: '0.0.0.0' });
      assert.deepEqual(config.organizations[0]!.users[0]!.keys, ['agw_fixed_admin_key']);
      assert.equal(config.server.port, 9191);
      assert.equal(config.server.host, '0.0.0.0');
    });
  });

  describe('the default config/gateway.yaml switches', () => {
    it('takes LOG_LEVEL and OPENAI_BASE_URL (a private address needs no flag), and still accepts allowPrivateNetwork', () => {
      const plain = parseConfig(defaultYaml, {});
      assert.equal(plain.logging.level, 'info');
      const local = parseConfig(defaultYaml, { LOG_LEVEL: 'debug', OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });
      assert.equal(local.logging.level, 'debug');
      assert.equal(local.providers['openai']!.baseUrl, 'http://127.0.0.1:11434/v1');
      const older = parseConfig(defaultYaml.replace('    responses: native\n', '    responses: native\n    allowPrivateNetwork: true\n'), {
        OPENAI_API_KEY: 'sk-x',
      });
      assert.equal(older.providers['openai']!.allowPrivateNetwork, true);
      assert.throws(() => parseConfig(defaultYaml, { LOG_LEVEL: 'loud' }), /logging\.level: must be one of/);
    });

    it('rejects a PORT that is not a port number, naming the variable', () => {
      for (const port of ['http', '-1', '70000', '80.5']) {
        assert.throws(
          () => parseConfig(defaultYaml, { PORT: port }),
          (err: unknown) =>
            err instanceof ConfigError &&
            err.problems[0] === `PORT: must be an integer from 0 to 65535, got "${port}" (fix: set PORT to a port number, or unset it to use server.port)`,
        );
      }
      assert.equal(parseConfig(defaultYaml, { PORT: '0' }).server.port, 0);
    });
  });

  describe('interpolation', () => {
    it('replaces ${NAME}, ${NAME:-default} and ${NAME:+word} with shell semantics', () => {
      const env = { SET: 'value', EMPTY: '' };
      assert.equal(interpolateString('a-${SET}-b', env), 'a-value-b');
      assert.equal(interpolateString('${UNSET}', env), '');
      assert.equal(interpolateString('${UNSET:-fallback}', env), 'fallback');
      assert.equal(interpolateString('${EMPTY:-fallback}', env), 'fallback');
      assert.equal(interpolateString('${SET:-fallback}', env), 'value');
      assert.equal(interpolateString('${SET:+on}', env), 'on');
      assert.equal(interpolateString('${UNSET:+on}', env), '');
      assert.equal(interpolateString('$SET and ${not valid}', env), '$SET and ${not valid}');
    });

    it('interpolates values, never YAML structure', () => {
      const doc = mergeConfig(baseConfigDocument(), { store: { driver: 'embedded', path: '${DATA_DIR}' } });
      const config = parseConfig(stringify(doc), { DATA_DIR: 'x\nstore: {driver: mongodb}' });
      assert.equal(config.store.driver, 'embedded');
      assert.equal(config.store.path, 'x\nstore: {driver: mongodb}');
    });
  });

  describe('validation', () => {
    it('names the path of every problem, all at once', () => {
      const doc = baseConfigDocument();
      const orgs = doc['organizations'] as Record<string, unknown>[];
      (orgs[0]!['users'] as Record<string, unknown>[])[1]!['role'] = 'owner';
      doc['store'] = { driver: 'embedded', pathh: './x' };
      const problems = problemsOf(doc);
      assert.ok(
        problems.includes('organizations[0].users[1].role: must be one of "admin", "member" (fix: write one of those instead of "owner")'),
        problems.join('\n'),
      );
      assert.ok(
        problems.some((p) => p.startsWith('store.pathh: unknown key (fix: remove it, or did you mean "path"?')),
        problems.join('\n'),
      );
    });

    it('reports a missing required key by its path', () => {
      const doc = mergeConfig(baseConfigDocument(), { models: [{ id: 'x' }] });
      assert.ok(problemsOf(doc).includes('models[0].provider: is required (fix: add provider)'));
    });

    it('rejects a model on an unknown provider and an agent on an unknown model', () => {
      const doc = mergeConfig(baseConfigDocument(), {
        models: [
          { id: 'demo', provider: 'demo' },
          { id: 'm2', provider: 'nope' },
        ],
        agents: [
          {
            id: '0f8b2a8e-6c55-4a8e-9d0e-3a1f2b3c4d5e',
            organization: 'acme',
            name: 'A',
            createdBy: 'u-admin',
            model: 'missing-model',
            instructions: 'x',
            steps: [{ prompt: 'p' }],
          },
        ],
      });
      const problems = problemsOf(doc);
      assert.ok(
        problems.some((p) => p.startsWith('models[1].provider: ')),
        problems.join('\n'),
      );
      assert.ok(
        problems.some((p) => p.startsWith('agents[0].model: no model with id "missing-model"')),
        problems.join('\n'),
      );
    });

    it('fails an invalid cron expression naming the trigger path', () => {
      const doc = mergeConfig(baseConfigDocument(), {
        agents: [
          {
            id: '0f8b2a8e-6c55-4a8e-9d0e-3a1f2b3c4d5e',
            organization: 'acme',
            name: 'A',
            createdBy: 'u-admin',
            model: 'demo',
            instructions: 'x',
            steps: [{ prompt: 'p' }],
            triggers: [{ type: 'webhook' }, { type: 'schedule', cron: '61 * * * *' }],
          },
        ],
      });
      const problems = problemsOf(doc);
      assert.ok(
        problems.some((p) => p.startsWith('agents[0].triggers[1].cron: invalid cron expression "61 * * * *"')),
        problems.join('\n'),
      );
    });

    it('refuses an unknown responses.timezone and accepts an IANA one', () => {
      const bad = problemsOf(mergeConfig(baseConfigDocument(), { responses: { timezone: 'Mars/Olympus_Mons' } }));
      assert.ok(
        bad.some((p) => p.startsWith('responses.timezone: unknown time zone "Mars/Olympus_Mons"')),
        bad.join('\n'),
      );
      const good = parseConfig(stringify(mergeConfig(baseConfigDocument(), { responses: { timezone: 'Europe/Berlin' } })), {}, 'test');
      assert.equal(good.responses.timezone, 'Europe/Berlin');
      assert.deepEqual(good.responses.serviceContext.include, ['organization', 'user', 'groups'], 'the default');
    });

    it('accepts UTC under its IANA names without building an Intl time-zone formatter (its ICU data stays unmapped)', () => {
      const original = Intl.DateTimeFormat;
      let built = 0;
      Intl.DateTimeFormat = new Proxy(original, {
        construct(target, args) {
          built++;
          return Reflect.construct(target, args) as object;
        },
      });
      try {
        for (const zone of ['UTC', 'Etc/UTC', 'utc', 'GMT', 'Etc/Zulu']) {
          const config = parseConfig(stringify(mergeConfig(baseConfigDocument(), { responses: { timezone: zone } })), {}, 'test');
          assert.equal(config.responses.timezone, zone);
          assert.equal(new original('en', { timeZone: zone }).resolvedOptions().timeZone, 'UTC', `${zone} is UTC to Intl too`);
        }
        assert.equal(parseConfig(stringify(baseConfigDocument()), {}, 'test').responses.timezone, 'UTC', 'the default');
        assert.equal(built, 0);
        parseConfig(stringify(mergeConfig(baseConfigDocument(), { responses: { timezone: 'Europe/Berlin' } })), {}, 'test');
        assert.equal(built, 1, 'any other zone is checked by Intl');
      } finally {
        Intl.DateTimeFormat = original;
      }
    });

    it('checks responses.compaction: a known model, a target below the threshold; defaults 0.8 and 0.5', () => {
      const bad = problemsOf(mergeConfig(baseConfigDocument(), { responses: { compaction: { model: 'gpt-nowhere', threshold: 0.6, target: 0.7 } } }));
      assert.ok(
        bad.some((p) => p.startsWith('responses.compaction.model: no model with id "gpt-nowhere"')),
        bad.join('\n'),
      );
      assert.ok(
        bad.some((p) => p.startsWith('responses.compaction.target: target 0.7 is not below threshold 0.6')),
        bad.join('\n'),
      );
      const good = parseConfig(stringify(baseConfigDocument()), {}, 'test');
      assert.deepEqual(good.responses.compaction, { threshold: 0.8, target: 0.5 });
    });

    it('checks files: defaults (25 MiB, links for an hour, at most a week), a default link lifetime within the longest', () => {
      const config = parseConfig(stringify(baseConfigDocument()), {}, 'test');
      assert.deepEqual(config.files, { maxBytes: 26214400, shareTtlSeconds: 3600, maxShareTtlSeconds: 604800 });
      assert.equal(config.server.publicUrl, undefined);
      const bad = problemsOf(mergeConfig(baseConfigDocument(), { files: { shareTtlSeconds: 7200, maxShareTtlSeconds: 3600, shareSecret: 'short' } }));
      assert.ok(
        bad.some((p) => p.startsWith('files.shareTtlSeconds: the default share link lifetime 7200 is longer than files.maxShareTtlSeconds 3600')),
        bad.join('\n'),
      );
      assert.ok(
        bad.some((p) => p.startsWith('files.shareSecret')),
        bad.join('\n'),
      );
      assert.ok(problemsOf(mergeConfig(baseConfigDocument(), { server: { publicUrl: 'ftp://x' } })).some((p) => p.startsWith('server.publicUrl')));
    });

    it('rejects group members and agent shares that name nobody', () => {
      const doc = baseConfigDocument();
      const orgs = doc['organizations'] as Record<string, unknown>[];
      orgs[0]!['groups'] = [{ id: 'finance', members: ['u-ghost'] }];
      const problems = problemsOf(doc);
      assert.ok(
        problems.some((p) => p.startsWith('organizations[0].groups[0].members[0]: no user "u-ghost" in organization "acme" (fix: ')),
        problems.join('\n'),
      );
    });

    it('rejects an invalid custom DLP pattern naming its path', () => {
      const doc = baseConfigDocument();
      const orgs = doc['organizations'] as Record<string, unknown>[];
      orgs[0]!['dlp'] = { enabled: true, custom: [{ name: 'bad', pattern: '([a-z' }] };
      const problems = problemsOf(doc);
      assert.ok(
        problems.some((p) => p.startsWith('organizations[0].dlp.custom[0].pattern: ')),
        problems.join('\n'),
      );
    });

    it('says in one line when the file is not YAML, with the line and what it reads', () => {
      assert.throws(
        () => parseConfig('server:\n  port: 8080\nstore:\n  driver: embedded\n  a: b: c\n', {}, 'cfg.yaml'),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.match(err.message, /^cfg\.yaml: line 5, column \d+: not valid YAML: .+ \(fix: correct this line: "a: b: c"\)$/);
          assert.ok(!err.message.includes('\n'));
          return true;
        },
      );
    });
  });

  describe('every problem at once, each with its path and fix', () => {
    it('reports schema errors and cross-references together', () => {
      const doc = mergeConfig(baseConfigDocument(), { server: { port: 'eighty' } });
      (doc['organizations'] as Record<string, unknown>[])[0]!['models'] = ['dmeo'];
      const problems = problemsOf(doc);
      assert.ok(problems.includes('server.port: must be integer (fix: write integer instead of "eighty")'), problems.join('\n'));
      assert.ok(
        problems.some((p) => p.startsWith('organizations[0].models[0]: no model with id "dmeo" (fix: did you mean "demo"?')),
        problems.join('\n'),
      );
    });

    it('rejects an organization model that does not exist, and accepts "*" and real ids', () => {
      const doc = baseConfigDocument();
      (doc['organizations'] as Record<string, unknown>[])[0]!['models'] = ['*', 'demo', 'dmeo'];
      const problems = problemsOf(doc);
      assert.deepEqual(
        problems.filter((p) => p.startsWith('organizations[')),
        ['organizations[0].models[2]: no model with id "dmeo" (fix: did you mean "demo"? ("*" (every model) or a model id: "*", "demo"))'],
      );
    });

    it('names the provider and the unset variable when a referenced model was switched off', () => {
      const doc = mergeConfig(baseConfigDocument(), {
        providers: { openai: { enabled: '${OPENAI_API_KEY:+true}', type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: '${OPENAI_API_KEY:-}' } },
        models: [
          { id: 'demo', provider: 'demo' },
          { id: 'gpt-4o-mini', provider: 'openai' },
        ],
        evaluation: { model: 'gpt-4o-mini' },
      });
      const problems = problemsOf(doc, {});
      assert.ok(
        problems.includes(
          'evaluation.model: model "gpt-4o-mini" is switched off: its provider "openai" is disabled because OPENAI_API_KEY is not set (fix: set OPENAI_API_KEY, or use a model that is on: "demo")',
        ),
        problems.join('\n'),
      );
      assert.doesNotThrow(() => parseConfig(stringify(doc), { OPENAI_API_KEY: 'sk-x' }));
    });
  });

  describe('file location', () => {
    it('takes --config, else GATEWAY_CONFIG, else config/gateway.yaml', () => {
      assert.equal(resolveConfigPath(['serve', '--config', 'a.yaml'], { GATEWAY_CONFIG: 'b.yaml' }, '/srv'), '/srv/a.yaml');
      assert.equal(resolveConfigPath(['--config=c.yaml'], {}, '/srv'), '/srv/c.yaml');
      assert.equal(resolveConfigPath([], { GATEWAY_CONFIG: 'b.yaml' }, '/srv'), '/srv/b.yaml');
      assert.equal(resolveConfigPath([], {}, '/srv'), '/srv/config/gateway.yaml');
    });
  });
});
