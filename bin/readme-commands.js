#!/usr/bin/env node
// Rewrites the README's command table from the command declarations (run by `npm run completions`);
// test/cli/readme.test.ts fails while the README and the declarations disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = "export { commandTable, withCommandTable } from './src/commands/readme'; export { program } from './src/commands/tree';";
const bundle = await build({ stdin: { contents: entry, resolveDir: root, loader: 'ts' }, bundle: true, write: false, format: 'esm', platform: 'node', logLevel: 'warning' });
const { commandTable, withCommandTable, program } = await import(`data:text/javascript;base64,${Buffer.from(bundle.outputFiles[0].text).toString('base64')}`);
const path = `${root}README.md`;
writeFileSync(path, withCommandTable(readFileSync(path, 'utf8'), commandTable(program)));
