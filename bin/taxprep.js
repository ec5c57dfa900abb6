#!/usr/bin/env node
// Launcher: refuse an unsupported Node before loading anything, then run the built CLI.
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`taxprep needs Node.js 20.19 or newer; this is ${process.version}.\n`);
  process.exit(2);
}
const { bundleFile, runCli } = await import('../dist/launch.js').catch((error) => {
  // A clone that was never built: one line that says so, instead of Node's stack trace.
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('launch.js')) throw error;
  process.stderr.write('taxprep is not built: run `npm install` (or `npm run build`) in this clone first.\n');
  process.exit(1);
});
await runCli(bundleFile(fileURLToPath(new URL('../dist/cli.cjs', import.meta.url))), process.argv.slice(2), process.env);
