import { build } from 'esbuild';
import { execa, type ResultPromise } from 'execa';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Two mocks started on one data directory at the same moment: exactly one runs, every time. The
 * racers are real processes opening the real store (bundled from src/ once), released together
 * by one write to each stdin, so that the second one often arrives while the first one's lock
 * file is created but not yet written: the moment the mock's own copy of the lock used to get
 * wrong (it removed that file and ran too).
 */

const TRIES = 100;

let workDir: string;
let racer: string;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'taxprep-datadir-lock-'));
  racer = join(workDir, 'openStore.cjs');
  await build({ entryPoints: [join(import.meta.dirname, 'processes', 'openStore.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: racer, logLevel: 'silent' });
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** Resolves to each line the process writes, in order, as it writes them. */
function lines(child: ResultPromise): () => Promise<string> {
  const waiting: Array<(line: string) => void> = [];
  const said: string[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      said.push(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
    }
    while (waiting.length > 0 && said.length > 0) waiting.shift()!(said.shift()!);
  });
  return () => (said.length > 0 ? Promise.resolve(said.shift()!) : new Promise((resolve) => waiting.push(resolve)));
}

/** One race on a fresh directory; resolves to what the two racers said. */
async function race(dataDir: string): Promise<{ said: string[]; exitCodes: Array<number | undefined> }> {
  const racers = [0, 1].map(() => execa(process.execPath, [racer, dataDir], { reject: false, stdin: 'pipe' }));
  const next = racers.map(lines);
  const ended = Promise.all(racers);
  // Both are loaded and waiting before either is let go.
  expect(await Promise.race([Promise.all(next.map((line) => line())), ended.then((results) => results.map((result) => String(result.stderr)))])).toEqual(['ready', 'ready']);
  for (const child of racers) child.stdin!.write('go\n');
  const said = await Promise.all(next.map((line) => line()));
  for (const child of racers) child.stdin!.end();
  return { said, exitCodes: (await ended).map((result) => result.exitCode) };
}

/** Races at once: each has its own directory, and the machine's cores stay busy. */
const AT_ONCE = 4;

describe('two mocks started on one --data-dir at the same moment', () => {
  it(`lets exactly one run, ${TRIES} times out of ${TRIES}`, async () => {
    let raced = 0;
    for (let first = 1; first <= TRIES; first += AT_ONCE) {
      const attempts = Array.from({ length: Math.min(AT_ONCE, TRIES - first + 1) }, (_, index) => first + index);
      await Promise.all(
        attempts.map(async (attempt) => {
          const dataDir = join(workDir, `dir-${attempt}`);
          const { said, exitCodes } = await race(dataDir);
          expect(said.filter((line) => line === 'running'), `attempt ${attempt}: ${said.join(' | ')}`).toHaveLength(1);
          expect(said.find((line) => line !== 'running')).toMatch(/^refused DataDirError: .*: in use by another mock service( \(process \d+\))?; stop it or choose another --data-dir$/);
          expect(exitCodes.sort()).toEqual([0, 3]);
          // The one that ran released the directory when it closed.
          expect(await readdir(dataDir)).not.toContain('lock');
          raced += 1;
        }),
      );
    }
    expect(raced).toBe(TRIES);
  }, 300_000);
});
