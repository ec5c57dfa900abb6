import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { findSecrets } from '../helpers/cli';

const DEMO = fileURLToPath(new URL('../../bin/demo.js', import.meta.url));
const RUNS = 20;
/** Two at a time: the machine has two cores, and each run is a mock and fifteen commands. */
const AT_ONCE = 2;

// The demo's temporary directories land here (TMPDIR), so what it leaves behind can be counted.
const temporary = mkdtempSync(join(tmpdir(), 'taxprep-demo-test-'));
afterAll(() => rmSync(temporary, { recursive: true, force: true }));

describe('npm run demo in a pipe', () => {
  it(`succeeds ${RUNS} times out of ${RUNS} and leaves no folder behind`, { timeout: 240_000 }, async () => {
    const env = { PATH: process.env.PATH ?? '', TMPDIR: temporary, HOME: temporary };
    const results = [];
    for (let first = 0; first < RUNS; first += AT_ONCE) {
      const batch = Array.from({ length: Math.min(AT_ONCE, RUNS - first) }, () => execa(process.execPath, [DEMO], { env, extendEnv: false, reject: false, all: true }));
      results.push(...(await Promise.all(batch)));
    }
    const failures = results.filter((result) => result.exitCode !== 0).map((result) => result.all);
    expect(failures).toEqual([]);
    expect(readdirSync(temporary).filter((name) => name.startsWith('taxprep-demo-'))).toEqual([]);

    const output = results[0]!.all;
    expect(findSecrets(output)).toEqual([]);
    // What a person sees at a terminal, in a pipe too: headers, readable dates, no tab-separated rows.
    expect(output).toMatch(/^ID +FILENAME +TAX YEAR +DESCRIPTION +UPLOADED$/m);
    expect(output).toMatch(/^ID +TYPE +TAX YEAR +STATUS +PROGRESS +EST\. COMPLETION$/m);
    expect(output).toMatch(/ 100% /);
    expect(output).not.toContain('\t');
    expect(output).not.toMatch(/\u001b\[/);
    // The commands' messages come down the same pipe, in order: the error right after its command.
    expect(output).toMatch(/\$ taxprep accounts get 999999\nerror: No account with id 999999 exists\.\n\(exit code 4\)\n/);
    expect(output).toMatch(/\nDone\. The mock is stopped/);
    // Issue 21, case 7: its last lines are commands a fresh clone can run, each within 80 columns.
    const ending = output.slice(output.lastIndexOf('Done.'));
    expect(ending).toContain('  npx taxprep serve --mock');
    for (const line of ending.split('\n').filter((each) => / taxprep /.test(` ${each} `))) expect(line).toMatch(/npx taxprep|npm link/);
    for (const line of ending.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('ends quietly, and cleans up, when its reader goes away (`npm run demo | head`)', async () => {
    const env = { PATH: process.env.PATH ?? '', TMPDIR: temporary, HOME: temporary };
    const child = execa(process.execPath, [DEMO], { env, extendEnv: false, reject: false, buffer: false, stderr: 'pipe' });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // The reader takes the first lines, then closes the pipe, as `head` does.
    child.stdout!.once('data', () => child.stdout!.destroy());
    const result = await child;
    expect({ exitCode: result.exitCode, stderr }).toEqual({ exitCode: 0, stderr: '' });
    expect(readdirSync(temporary).filter((name) => name.startsWith('taxprep-demo-'))).toEqual([]);
  });
});
