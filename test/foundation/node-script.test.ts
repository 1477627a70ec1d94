// runNodeScript (src/node-script.ts): the short-lived child process the embedded store's initdb and the
// browser tools' start-up check run in. It says null for a clean exit and why not otherwise.
import assert from 'node:assert/strict';
import { runNodeScript } from '../../src/node-script';

describe('a node script in a child process', () => {
  it('a clean exit is null; the script gets its arguments', async () => {
    assert.equal(await runNodeScript('process.exit(process.argv[1] === "a" && process.argv[2] === "b" ? 0 : 3)', ['a', 'b']), null);
  });

  it('a failure is what the script wrote to stderr, else how it ended', async () => {
    assert.equal(await runNodeScript('process.stderr.write("no database here\\n"); process.exit(1)', []), 'no database here');
    assert.equal(await runNodeScript('process.exit(7)', []), 'the process ended with exit code 7');
  });

  it('a script past its timeout is killed and says so', async () => {
    assert.equal(await runNodeScript('setInterval(() => {}, 1000)', [], { timeoutMs: 100 }), 'the process ended with SIGKILL');
  });
});
