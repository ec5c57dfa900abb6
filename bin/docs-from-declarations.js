#!/usr/bin/env node
// `npm run docs` (also run by `npm run completions`): rewrites what is generated from the command
// declarations besides the completions: the command reference in docs/commands/ (a page a
// command and a help topic, and an index), the man pages in man/ (one a command, plus
// taxprep(1)), removing pages of commands that are gone, and package.json's `man` list, through
// which `npm install -g` links them (npm takes no directory there). test/cli/docs-drift.test.ts
// and test/cli/man.test.ts fail while the checked-in copies and the declarations disagree.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = "export { markdownPages } from './src/commands/markdown'; export { manPages } from './src/commands/man'; export { program } from './src/commands/tree';";
const bundle = await build({ stdin: { contents: entry, resolveDir: root, loader: 'ts' }, bundle: true, write: false, format: 'esm', platform: 'node', logLevel: 'warning', external: ['@napi-rs/keyring'] });
const { markdownPages, manPages, program } = await import(`data:text/javascript;base64,${Buffer.from(bundle.outputFiles[0].text).toString('base64')}`);

/** Writes `pages` into `directory`, removing the files there that no page is. */
function replaceDirectory(directory, pages) {
  mkdirSync(directory, { recursive: true });
  for (const name of readdirSync(directory)) if (!pages.some((page) => page.file === name)) rmSync(`${directory}/${name}`);
  for (const page of pages) writeFileSync(`${directory}/${page.file}`, page.text);
}

replaceDirectory(`${root}docs/commands`, markdownPages(program));
const pages = manPages(program, JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version);
replaceDirectory(`${root}man`, pages);

const packageJson = `${root}package.json`;
const manifest = JSON.parse(readFileSync(packageJson, 'utf8'));
manifest.man = pages.map((page) => `man/${page.file}`);
writeFileSync(packageJson, `${JSON.stringify(manifest, null, 2)}\n`);
process.stdout.write(`docs/commands: ${markdownPages(program).length} pages; man: ${pages.length} pages.\n`);
