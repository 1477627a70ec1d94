#!/usr/bin/env node
// `npx agent-gateway <command>`, `npm start` and `npm run worker`: builds on first use, then runs the
// compiled entry in this same process. One process (not `ensure-built && node main.js` in a shell)
// means a signal sent to it, or forwarded to it by npm, reaches the gateway itself.
'use strict';
const { ensureBuilt } = require('../scripts/ensure-built.js');

ensureBuilt().then(
  () => require('../dist/src/main.js'),
  (err) => {
    process.stderr.write(`agent-gateway: ${err.message}\n`);
    process.exit(1);
  },
);
