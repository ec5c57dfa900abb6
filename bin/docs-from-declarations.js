#!/usr/bin/env node
// Rewrites what is generated from the command declarations besides the completions (run by
// `npm run completions`): the README's command table, the man pages in man/ (one a command, plus
// taxprep(1)), removing pages of commands that are gone, and package.json's `man` list, through
// which `npm install -g` links them (npm takes no directory there). test/cli/spec-flags.test.ts
// and test/cli/man.test.ts fail while the checked-in copies and the declarations disagree.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = "export { commandTable, withCommandTable } from './src/commands/readme'; export { manPages } from './src/commands/man'; export { program } from './src/commands/tree';";
const bundle = await build({ stdin: { contents: entry, resolveDir: root, loader: 'ts' }, bundle: true, write: false, format: 'esm', platform: 'node', logLevel: 'warning' });
const { commandTable, withCommandTable, manPages, program } = await import(`data:text/javascript;base64,${Buffer.from(bundle.outputFiles[0].text).toString('base64')}`);

const readme = `${root}README.md`;
writeFileSync(readme, withCommandTable(readFileSync(readme, 'utf8'), commandTable(program)));

const manDirectory = `${root}man`;
mkdirSync(manDirectory, { recursive: true });
const pages = manPages(program, JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version);
for (const name of readdirSync(manDirectory)) if (!pages.some((page) => page.file === name)) rmSync(`${manDirectory}/${name}`);
for (const page of pages) writeFileSync(`${manDirectory}/${page.file}`, page.text);

const packageJson = `${root}package.json`;
const manifest = JSON.parse(readFileSync(packageJson, 'utf8'));
manifest.man = pages.map((page) => `man/${page.file}`);
writeFileSync(packageJson, `${JSON.stringify(manifest, null, 2)}\n`);
