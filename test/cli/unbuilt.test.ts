import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

describe('a clone that is not built yet', () => {
  it('bin/taxprep.cjs says so in one line, names the command that builds, and exits 1 (no stack trace)', async () => {
    const clone = mkdtempSync(join(tmpdir(), 'taxprep-unbuilt-'));
    mkdirSync(join(clone, 'bin'));
    copyFileSync(fileURLToPath(new URL('../../bin/taxprep.cjs', import.meta.url)), join(clone, 'bin', 'taxprep.cjs'));
    const result = await execa(process.execPath, [join(clone, 'bin', 'taxprep.cjs'), 'health'], { reject: false });
    expect([result.exitCode, result.stdout, result.stderr]).toEqual([1, '', 'taxprep is not built: run `npm install` (or `npm run build`) in this clone first.']);
  });
});
