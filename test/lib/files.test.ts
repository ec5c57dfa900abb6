import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomically } from '../../src/lib/files';

const posix = process.platform !== 'win32';

describe('writeFileAtomically', () => {
  it.each([true, false])('replaces the file whole (durable: %s), as a private file, leaving nothing beside it', async (durable) => {
    const directory = mkdtempSync(join(tmpdir(), 'taxprep-files-'));
    const path = join(directory, 'state.json');
    writeFileSync(path, 'old', { mode: 0o644 });
    await writeFileAtomically(path, 'new text', { durable });
    expect(readFileSync(path, 'utf8')).toBe('new text');
    if (posix) expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(directory)).toEqual(['state.json']);
  });

  it('writes an async iterable chunk by chunk', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'taxprep-files-')), 'blob');
    async function* chunks() {
      yield Buffer.from('one ');
      yield Buffer.from('two');
    }
    await writeFileAtomically(path, chunks(), { durable: false });
    expect(readFileSync(path, 'utf8')).toBe('one two');
  });

  it('keeps the old file and removes the temporary one when the content fails midway', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'taxprep-files-'));
    const path = join(directory, 'blob');
    writeFileSync(path, 'old');
    async function* failing() {
      yield Buffer.from('half');
      throw new Error('the upload broke off');
    }
    await expect(writeFileAtomically(path, failing(), { durable: true })).rejects.toThrow('the upload broke off');
    expect(readFileSync(path, 'utf8')).toBe('old');
    expect(readdirSync(directory)).toEqual(['blob']);
  });
});
