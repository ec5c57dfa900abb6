import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every run of the CLI in the tests goes through test/helpers/cli.ts (runCli, startCli,
 * runScanned, startScanned), which scans stdout and stderr for a key printed in full. A test that
 * spawned bin/taxprep.cjs its own way would let a leaked key pass: this reads every test file's
 * code (comments left out) for another way to name the CLI.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const HELPER = 'test/helpers/cli.ts';

function testFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [relative(root, path)] : [];
  });
}

/** The code without its comments (a comment may name bin/taxprep.cjs when it describes a test). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The ways a file could run the CLI without the helper: the script's path, or the helper's own command line. */
const OTHER_WAYS: Array<[RegExp, string]> = [
  [/['"`][^'"`\n]*bin\/taxprep\.c?js[^'"`\n]*['"`]/, 'names bin/taxprep.cjs'],
  [/\btaxprepCommand\s*\(/, "builds taxprep's command line itself (taxprepCommand)"],
  [/\bTAXPREP_TEST_EXECUTABLE\b/, 'reads the executable under test itself'],
];

/** Files that name the path for another reason, each with it. */
const EXEMPT: Record<string, string> = {
  'test/cli/package.test.ts': 'lists bin/taxprep.cjs among the files the npm package must hold; runs npm, not taxprep',
  'test/helpers/spawns.test.ts': 'this file: its patterns name the path',
  'test/cli/unbuilt.test.ts': 'runs a copy of the launcher alone in a folder with no build: it can print no key',
};

/** What in `text` names the CLI another way than through the helper. */
export function otherWaysOfSpawning(text: string): string[] {
  const source = code(text);
  return OTHER_WAYS.filter(([pattern]) => pattern.test(source)).map(([, what]) => what);
}

describe('the CLI is run in tests only through test/helpers/cli.ts', () => {
  it('no test file names bin/taxprep.cjs or builds its command line itself', () => {
    const offenders = testFiles(join(root, 'test'))
      .filter((file) => file !== HELPER && EXEMPT[file] === undefined)
      .flatMap((file) => otherWaysOfSpawning(readFileSync(join(root, file), 'utf8')).map((what) => `${file} ${what}`));
    expect(offenders).toEqual([]);
  });

  it('finds each way it looks for, and not a mention in a comment', () => {
    expect(otherWaysOfSpawning("const BIN = fileURLToPath(new URL('../../bin/taxprep.cjs', import.meta.url));")).toEqual(['names bin/taxprep.cjs']);
    expect(otherWaysOfSpawning('execa(process.execPath, [`${root}/bin/taxprep.cjs`, ...args])')).toEqual(['names bin/taxprep.cjs']);
    expect(otherWaysOfSpawning('const [command, ...args] = taxprepCommand();')).toEqual(["builds taxprep's command line itself (taxprepCommand)"]);
    expect(otherWaysOfSpawning('const exe = process.env.TAXPREP_TEST_EXECUTABLE;')).toEqual(['reads the executable under test itself']);
    expect(otherWaysOfSpawning('/** Runs the built `bin/taxprep.cjs`. */\n// as bin/taxprep.cjs does\nrunCli(args);')).toEqual([]);
  });
});
