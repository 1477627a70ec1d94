// The store contract: one suite, run against every backend. Embedded and postgres always; mongodb when
// MONGODB_URL is set (skipped, saying why, otherwise).
import type { Store } from '../../src/store/port';
import { mongodbUrl, openTestStore, type TestStore, type TestStoreDriver } from '../helpers/store';
import { agentsContract } from './contract/agents';
import { consoleListsContract } from './contract/console-lists';
import { consoleSessionsContract } from './contract/console-sessions';
import { conversationsContract } from './contract/conversations';
import { filesContract } from './contract/files';
import { dashboardsContract } from './contract/dashboards';
import type { StoreHandle } from './contract/fixtures';
import { identityContract } from './contract/identity';
import { keyModelsContract } from './contract/key-models';
import { knowledgeContract } from './contract/knowledge';
import { lifecycleContract } from './contract/lifecycle';
import { recordsContract } from './contract/records';
import { responsesContract } from './contract/responses';
import { runsContract } from './contract/runs';
import { toolStateContract } from './contract/tool-state';
import { turnsContract } from './contract/turns';

const DRIVERS: readonly TestStoreDriver[] = ['embedded', 'postgres', 'mongodb'];

for (const driver of DRIVERS) {
  describe(`store contract: ${driver}`, function () {
    // The first embedded store of a process runs PGlite's initdb (several seconds on a busy machine).
    this.timeout(60_000);
    let current: TestStore | null = null;
    const handle: StoreHandle = {
      get store(): Store {
        if (!current) throw new Error('store not open');
        return current.store;
      },
    };

    before(async function () {
      if (driver === 'mongodb' && !mongodbUrl()) {
        console.log('    (mongodb store contract skipped: MONGODB_URL is not set; no MongoDB server to test against)');
        this.skip();
      }
      current = await openTestStore(driver);
    });

    after(async () => {
      await current?.cleanup();
    });

    identityContract(handle);
    consoleSessionsContract(handle);
    agentsContract(handle);
    runsContract(handle);
    keyModelsContract(handle);
    conversationsContract(handle);
    recordsContract(handle);
    responsesContract(handle);
    turnsContract(handle, driver);
    toolStateContract(handle, driver);
    filesContract(handle);
    knowledgeContract(handle);
    dashboardsContract(handle);
    consoleListsContract(handle);
    lifecycleContract(driver);
  });
}
