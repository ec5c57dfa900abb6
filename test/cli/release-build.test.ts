import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { buildOptions, stampDefines } from '../../bin/build.js';
import { CRASH_AT_VARIABLE, HOLD_WRITES_VARIABLE } from '../../src/lib/crashPoints';

/** Runs `taxprep version` from a bundle built as bin/build.js builds it, release or not; its exit code and stderr. */
async function versionFrom(release: boolean, env: Record<string, string>): Promise<{ status: number; stderr: string }> {
  const outfile = join(mkdtempSync(join(tmpdir(), 'taxprep-release-build-')), 'cli.cjs');
  await build({ ...buildOptions, outfile, define: stampDefines('9.9.9', { commit: 'abc', date: '2026-01-01T00:00:00Z' }, release), logLevel: 'silent' });
  const script = `require(${JSON.stringify(outfile)}).main(['version']).then((code) => { process.exitCode = code; })`;
  try {
    execFileSync(process.execPath, ['-e', script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { status: 0, stderr: '' };
  } catch (error) {
    const failed = error as { status: number; stderr: string };
    return { status: failed.status, stderr: failed.stderr };
  }
}

describe('the test-only crash switch in a release build', () => {
  it('a release build refuses to start with it set: exit 2, the variable named, nothing run', async () => {
    const refused = await versionFrom(true, { [CRASH_AT_VARIABLE]: 'batch.after-intent' });
    expect(refused).toEqual({ status: 2, stderr: `error: ${CRASH_AT_VARIABLE} is a test-only switch and this is a release build; unset it.\n` });
  });

  it('and with the switch that holds ledger writes back (TAXPREP_TEST_HOLD_WRITES)', async () => {
    const refused = await versionFrom(true, { [HOLD_WRITES_VARIABLE]: '400' });
    expect(refused).toEqual({ status: 2, stderr: `error: ${HOLD_WRITES_VARIABLE} is a test-only switch and this is a release build; unset it.\n` });
  });

  it('a release build without it runs; a development build (the tests\' own) runs with it', async () => {
    expect(await versionFrom(true, {})).toEqual({ status: 0, stderr: '' });
    expect(await versionFrom(false, { [CRASH_AT_VARIABLE]: 'batch.after-intent' })).toEqual({ status: 0, stderr: '' });
  });
});
