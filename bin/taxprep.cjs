#!/usr/bin/env node
// Launcher: refuse an unsupported Node before loading anything, then run the built CLI. CommonJS,
// as is dist/launch.cjs: an ES module entry would start Node's ES module loader, which reads its
// files asynchronously and loads about thirty of Node's own modules more (bench/startup.bench.js).
'use strict';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`taxprep needs Node.js 20.19 or newer; this is ${process.version}.\n`);
  process.exit(2);
}
const { join } = require('node:path');
let launcher;
try {
  launcher = require('../dist/launch.cjs');
} catch (error) {
  // A clone that was never built: one line that says so, instead of Node's stack trace.
  if (error?.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes('launch.cjs')) throw error;
  process.stderr.write('taxprep is not built: run `npm install` (or `npm run build`) in this clone first.\n');
  process.exit(1);
}
launcher.runCli(launcher.bundleFile(join(__dirname, '..', 'dist', 'cli.cjs')), process.argv.slice(2), process.env);
