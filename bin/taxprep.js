#!/usr/bin/env node
// Launcher: refuse an unsupported Node before loading anything, then run the built CLI.
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`taxprep needs Node.js 20.19 or newer; this is ${process.version}.\n`);
  process.exit(2);
}
const { bundleFile, runCli } = await import('../dist/launch.js');
await runCli(bundleFile(fileURLToPath(new URL('../dist/cli.cjs', import.meta.url))), process.argv.slice(2), process.env);
