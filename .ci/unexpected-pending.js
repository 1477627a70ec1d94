// Prints, one a line, the pending (skipped) tests of a results file (test/support/reporter.js) that
// are not allowed to be pending. The only allowed skip: the MongoDB store contract without MONGODB_URL.
'use strict';
const fs = require('node:fs');

const ALLOWED = [{ file: 'test/store/contract.test.ts', titlePrefix: 'store contract: mongodb ' }];

const results = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
for (const test of results.pendingTests ?? []) {
  const allowed = ALLOWED.some((rule) => test.file === rule.file && test.title.startsWith(rule.titlePrefix));
  if (!allowed) process.stdout.write(`${test.title} (${test.file ?? 'unknown file'})\n`);
}
