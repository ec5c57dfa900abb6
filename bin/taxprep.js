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

// A reader that stopped reading (`taxprep ... | head -1`) is not a failure: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

const { main } = await import('../dist/cli.js');
const exitCode = await main(process.argv.slice(2));

/** Resolves once everything written to `stream` so far has been handed to the OS. */
const flushed = (stream) => new Promise((resolve) => stream.write('', () => resolve()));
// Exit as soon as the output is out, instead of when the event loop drains: V8 may still be
// compiling in the background and closed sockets linger for a moment, and a CLI gains nothing
// from waiting for either.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(exitCode);
