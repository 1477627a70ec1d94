// Identity loading (config → store, first-start bootstrap) and the admin operations behind the CLI,
// on a real embedded store (the process-level tests in test/operations cover the binary itself).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { runAdminOp } from '../../src/cli/admin-ops';
import { CliError } from '../../src/cli/args';
import { syncIdentity } from '../../src/identity/sync';
import { createLogger } from '../../src/log/logger';
import { hashApiKey } from '../../src/security/keys';
import { TEST_KEYS, testConfig } from '../helpers/config';
import { openTestStore, type TestStore } from '../helpers/store';

const logger = createLogger({ level: 'error', silent: true });

describe('identity and admin operations', function () {
  this.timeout(30_000);
  let testStore: TestStore;
  beforeEach(async () => (testStore = await openTestStore('embedded')));
  afterEach(async () => testStore.cleanup());

  it('hashes a key to its SHA-256 hex digest (the stored form, whichever Node API computes it)', () => {
    const key = 'agw_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
    assert.equal(hashApiKey(key), createHash('sha256').update(key, 'utf8').digest('hex'));
    assert.equal(hashApiKey('agw_é'), createHash('sha256').update('agw_é', 'utf8').digest('hex'));
  });

  it('loads organizations, users, groups and keys from the config, hashed, idempotently', async () => {
    const config = testConfig();
    const { store } = testStore;
    assert.deepEqual(await syncIdentity(config, store, logger), { bootstrapKey: null });
    await syncIdentity(config, store, logger);
    const keys = await store.keys.listByOrg('acme');
    assert.equal(keys.length, 3, 'a second sync adds no duplicate');
    for (const key of keys) {
      assert.ok(!JSON.stringify(key).includes('agw_test_'), 'the key itself is never stored');
    }
    const resolved = await store.keys.resolve(hashApiKey(TEST_KEYS.viewer));
    assert.equal(resolved?.user.id, 'u-viewer');
    assert.deepEqual(resolved?.groups, ['finance']);
    assert.equal((await store.users.get('u-admin'))?.role, 'admin');
  });

  it('first start with no key anywhere: only the serving process creates default/admin and one key', async () => {
    const config = testConfig({
      organizations: [{ id: 'default', name: 'Default', models: ['*'], users: [{ id: 'admin', name: 'Admin', role: 'admin', keys: [''] }] }],
    });
    const { store } = testStore;
    // An admin command or a worker could not show the key to anyone: it creates none.
    assert.deepEqual(await syncIdentity(config, store, logger, new Date(), { bootstrap: false }), { bootstrapKey: null });
    assert.equal(await store.keys.countActive(), 0);
    const { bootstrapKey } = await syncIdentity(config, store, logger);
    assert.match(bootstrapKey ?? '', /^agw_/);
    const principal = await store.keys.resolve(hashApiKey(bootstrapKey!));
    assert.equal(principal?.user.orgId, 'default');
    assert.equal(principal?.user.id, 'admin');
    assert.equal(principal?.user.role, 'admin');
    assert.deepEqual(await syncIdentity(config, store, logger), { bootstrapKey: null }, 'once only');
  });

  it('runs the admin operations and names unknown organizations and users in one line', async () => {
    const { store } = testStore;
    await syncIdentity(testConfig(), store, logger);
    const created = await runAdminOp(store, { cmd: 'keys.create', org: 'acme', user: 'u-member', name: 'bot' });
    const key = created.stdout.trim();
    assert.match(key, /^agw_/);
    const id = /created key (\S+) for u-member in acme/.exec(created.stderr)?.[1];
    assert.ok(id);
    const listed = await runAdminOp(store, { cmd: 'keys.list', org: 'acme' });
    assert.equal(listed.stdout.trim().split('\n').length, 5, 'header and four keys');
    assert.ok(!listed.stdout.includes(key));
    await runAdminOp(store, { cmd: 'keys.revoke', id });
    assert.equal(await store.keys.resolve(hashApiKey(key)), null);

    const failures: [Parameters<typeof runAdminOp>[1], RegExp][] = [
      [{ cmd: 'keys.create', org: 'nope', user: 'u-member', name: 'x' }, /^keys create: no organization "nope"$/],
      [{ cmd: 'keys.create', org: 'other', user: 'u-member', name: 'x' }, /^keys create: no user "u-member" in organization "other"$/],
      [{ cmd: 'keys.list', org: 'nope' }, /^keys list: no organization "nope"$/],
      [{ cmd: 'audit.list', org: 'nope', since: null, limit: 10 }, /^audit list: no organization "nope"$/],
      [{ cmd: 'keys.revoke', id }, /^keys revoke: no active key with id/],
    ];
    for (const [op, message] of failures) {
      await assert.rejects(runAdminOp(store, op), (err: unknown) => err instanceof CliError && message.test(err.message));
    }
  });
});
