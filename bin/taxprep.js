#!/usr/bin/env node
// Launcher: refuse an unsupported Node before loading anything, then run the built CLI.
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`taxprep needs Node.js 20.19 or newer; this is ${process.version}.\n`);
  process.exit(2);
}
// A failed stdout (a reader gone, a full disk) is reported by the CLI with its own exit code
// (src/cli.ts, `main`); a failed stderr has nobody to tell. Either way a write failing after that,
// here or in the CLI, must not become an uncaught exception and a stack trace.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

const { loadCli } = await import('../dist/launch.js');
const argv = process.argv.slice(2);
const { cli, keepCompiledCode } = loadCli(fileURLToPath(new URL('../dist/cli.cjs', import.meta.url)), argv, process.env);
const exitCode = await cli.main(argv);

/** Resolves once everything written to `stream` so far has been handed to the OS. */
const flushed = (stream) => new Promise((resolve) => stream.write('', () => resolve()));
// Exit as soon as the output is out, instead of when the event loop drains: V8 may still be
// compiling in the background and closed sockets linger for a moment, and a CLI gains nothing
// from waiting for either.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
await keepCompiledCode();
process.exit(exitCode);
