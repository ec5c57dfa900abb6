import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csvCell, openRecordFile } from '../../src/batch/records';

/** The record files of a batch (`--results`, `--links`): src/batch/records.ts. */

const dir = mkdtempSync(join(tmpdir(), 'taxprep-records-'));
const openFds = () => readdirSync('/proc/self/fd').length;

describe('a cell of a CSV record file', () => {
  it('is quoted only with a comma, quote, line break or a space at either edge, not a space inside', () => {
    expect(csvCell('Ada Lovelace')).toBe('Ada Lovelace');
    expect(csvCell(' Ada')).toBe('" Ada"');
    expect(csvCell('Ada ')).toBe('"Ada "');
    expect(csvCell('say "hi", Ada')).toBe('"say ""hi"", Ada"');
  });
});

describe('a record file', () => {
  it('is NDJSON unless the name ends in .csv: a name with .csv inside is NDJSON', async () => {
    const path = join(dir, 'results.csv.ndjson');
    const file = await openRecordFile(path, ['email', 'status'], { append: false, flag: '--results' });
    await file.write({ email: 'a@example.com', status: 'created' });
    await file.close();
    expect(readFileSync(path, 'utf8')).toBe('{"email":"a@example.com","status":"created"}\n');
  });

  it('names the error code when it cannot be opened for a reason other than a directory', async () => {
    const path = join(dir, 'missing', 'results.csv');
    await expect(openRecordFile(path, ['email'], { append: false, flag: '--results' })).rejects.toThrow(
      `--results ${path}: cannot be written (ENOENT); nothing was sent`,
    );
    await expect(openRecordFile(dir, ['email'], { append: false, flag: '--results' })).rejects.toThrow(`--results ${dir}: cannot be written (is a directory); nothing was sent`);
  });

  it('close waits for the writes under way, then gives the file back', async () => {
    const before = openFds();
    const path = join(dir, 'links.csv');
    const file = await openRecordFile(path, ['email', 'url'], { append: false, flag: '--links' });
    expect(openFds()).toBe(before + 1);
    void file.write({ email: 'a@example.com', url: 'https://x.test/a' });
    await file.close();
    expect(openFds()).toBe(before);
    expect(readFileSync(path, 'utf8')).toBe('email,url\r\na@example.com,https://x.test/a\r\n');
  });
});
