#!/usr/bin/env node
// Launcher: refuse an unsupported Node before loading anything, then run the built CLI.
import module from 'node:module';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`taxprep needs Node.js 20.19 or newer; this is ${process.version}.\n`);
  process.exit(2);
}
// Node 22.1+ keeps compiled code between runs; a no-op where unavailable.
module.enableCompileCache?.();

const { main } = await import('../dist/cli.js');
process.exitCode = await main(process.argv.slice(2));
