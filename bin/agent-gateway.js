#!/usr/bin/env node
// `npx agent-gateway <command>`: builds on first use, then runs the compiled entry.
'use strict';
require('../scripts/ensure-built.js');
require('../dist/src/main.js');
