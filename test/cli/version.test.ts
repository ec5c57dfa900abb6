import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildStamp } from '../../bin/build.js';
import { runCli } from '../helpers/cli';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the build stamps the commit and build date into taxprep version', () => {
  it('the built CLI reports the clone commit, an ISO build date and the Node it runs on', async () => {
    const result = await runCli(['version', '--json']);
    expect(result.exitCode).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.commit).toBe(execFileSync('git', ['-C', root, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).trim());
    expect(document.build_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(document.runtime).toBe(`node ${process.version}`);
  });

  it('outside git the commit is unknown, and the build does not fail', () => {
    expect(buildStamp(mkdtempSync(join(tmpdir(), 'taxprep-no-git-'))).commit).toBe('unknown');
  });

  it('without git installed the commit is unknown', () => {
    expect(buildStamp(root, { PATH: mkdtempSync(join(tmpdir(), 'taxprep-no-git-bin-')) }).commit).toBe('unknown');
  });

  it('SOURCE_DATE_EPOCH sets the build date (a build that can be repeated)', () => {
    expect(buildStamp(root, { ...process.env, SOURCE_DATE_EPOCH: '1767225600' }).date).toBe('2026-01-01T00:00:00Z');
  });
});
