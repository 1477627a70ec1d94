// Mocha reporter: the usual spec output for people, plus the run's counts written to
// .tmp/test-results.json so .ci/run can print its `N passed, M failed` line from the results. Pending
// (skipped) tests are listed by title and file: .ci/run fails on any but the documented ones.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');

const { EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;

class CountingSpecReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const counts = { passed: 0, failed: 0, pending: 0, failures: [], pendingTests: [] };
    runner.on(EVENT_TEST_PASS, () => counts.passed++);
    runner.on(EVENT_TEST_PENDING, (test) => {
      counts.pending++;
      counts.pendingTests.push({ title: test.fullTitle(), file: test.file ? path.relative(process.cwd(), test.file) : null });
    });
    // A failing hook ("before all" etc.) fails the tests it guards; mocha reports it as one failure.
    runner.on(EVENT_TEST_FAIL, (test) => {
      counts.failed++;
      counts.failures.push(test.fullTitle());
    });
    runner.once(EVENT_RUN_END, () => {
      const file = process.env.TEST_RESULTS_FILE || path.join(process.cwd(), '.tmp', 'test-results.json');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify({ ...counts, finishedAt: new Date().toISOString() }, null, 2));
    });
  }
}

module.exports = CountingSpecReporter;
