import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { excluder, globToRegExp, hashFile, manifestSource, walkLayout } from '../../src/commands/docs/lib/syncSources';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'taxprep-sync-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

describe('globs', () => {
  it.each([
    ['*.tmp', 'a.tmp', true],
    ['*.tmp', 'a.tmp.pdf', false],
    ['draft?', 'drafts', true],
    ['[!a]*', 'apple', false],
    ['[!a]*', 'pear', true],
    ['1001/**', '1001/2024/w2.pdf', true],
    ['**/2023', '1001/2023', true],
    ['**/2023', '2023', true],
    ['1001/*', '1001/2024/w2.pdf', false],
    ['a.b', 'aXb', false],
  ])('%s matches %s: %s', (glob, path, expected) => {
    expect(globToRegExp(glob).test(path)).toBe(expected);
  });

  it('a pattern without / matches a name at any depth, one with / the path from the folder', () => {
    const excluded = excluder(['drafts', '1002/2023']);
    expect(excluded('1001/drafts')).toBe(true);
    expect(excluded('1001/2024/drafts')).toBe(true);
    expect(excluded('1002/2023')).toBe(true);
    expect(excluded('1001/2023')).toBe(false);
  });
});

describe('walking <dir>/<account-id>/<tax-year>/<file>', () => {
  it('lists the files in name order with their account and year; hidden, excluded and special entries are counted', async () => {
    const root = tree({
      '1001/2025/w2.pdf': 'w2',
      '1001/2025/.DS_Store': 'x',
      '1001/2024/1099.pdf': '1099',
      '1001/drafts/2025/x.pdf': 'x',
      '.git/config': 'x',
      '1002/2025/scan.png': 'png',
      '1002/2025/notes.tmp': 'tmp',
    });
    execFileSync('mkfifo', [join(root, '1002/2025/pipe')]);
    const list = await walkLayout(root, ['drafts', '*.tmp']);
    expect(list.sources.map((source) => [source.relative, source.account_id, source.tax_year])).toEqual([
      ['1001/2024/1099.pdf', 1001, 2024],
      ['1001/2025/w2.pdf', 1001, 2025],
      ['1002/2025/scan.png', 1002, 2025],
    ]);
    expect(list.leftOut).toEqual({ hidden: 2, excluded: 2, notRegular: 1 });
    expect(list.problems).toEqual([]);
  });

  it('names every entry out of the layout, a loop of links, and a folder that is missing', async () => {
    const root = tree({ 'clients/2025/a.pdf': 'a', '1001/twenty/a.pdf': 'a', '1001/2025/sub/a.pdf': 'a', 'top.pdf': 'x', '1001/2025/ok.pdf': 'ok' });
    symlinkSync(join(root, '1001'), join(root, '1001', '2025', 'loop'));
    symlinkSync('self', join(root, '1001', '2025', 'self'));
    const list = await walkLayout(root, []);
    expect(list.sources.map((source) => source.relative)).toEqual(['1001/2025/ok.pdf']);
    expect(list.problems).toEqual([
      { where: '1001/2025/loop', problem: 'is a symbolic link that loops (a directory inside itself)' },
      { where: '1001/2025/self', problem: 'is a symbolic link that loops' },
      { where: '1001/2025/sub', problem: 'is a directory below <account-id>/<tax-year>; the layout is <account-id>/<tax-year>/<file>' },
      { where: '1001/twenty', problem: 'is not a tax year (a year of four digits); the layout is <account-id>/<tax-year>/<file>' },
      { where: 'clients', problem: 'is not an account id (a positive integer written plainly, such as 1001); the layout is <account-id>/<tax-year>/<file>' },
      { where: 'top.pdf', problem: 'is not inside <account-id>/<tax-year>/; the layout is <account-id>/<tax-year>/<file>' },
    ]);
    await expect(walkLayout(join(root, 'nowhere'), [])).rejects.toThrow(`${join(root, 'nowhere')} does not exist; nothing was sent`);
  });
});

describe('manifest rows', () => {
  const none = excluder([]);
  it('takes a path from <dir>, and refuses one that leads out of it', () => {
    expect(manifestSource('/data/docs', { line: 2, path: 'ada/w2.pdf', account_id: 1001, tax_year: 2025 }, none)).toEqual({
      relative: 'ada/w2.pdf',
      path: '/data/docs/ada/w2.pdf',
      account_id: 1001,
      tax_year: 2025,
      line: 2,
    });
    expect(manifestSource('/data/docs', { line: 3, path: '../secret.pdf', account_id: 1001, tax_year: 2025 }, none)).toEqual({
      where: 'line 3',
      field: 'path',
      problem: '../secret.pdf is outside /data/docs',
    });
    expect(manifestSource('/data/docs', { line: 4, path: '/etc/passwd.pdf', account_id: 1001, tax_year: 2025 }, none)).toMatchObject({ problem: '/etc/passwd.pdf is outside /data/docs' });
    expect(manifestSource('/data/docs', { line: 5, path: 'a/.cache/x.pdf', account_id: 1001, tax_year: 2025 }, none)).toBe('hidden');
    expect(manifestSource('/data/docs', { line: 6, path: 'drafts/x.pdf', account_id: 1001, tax_year: 2025 }, excluder(['drafts']))).toBe('excluded');
  });
});

describe('hashing', () => {
  it('streams the file: sha256 and size', async () => {
    const root = tree({ 'a.txt': 'abc' });
    expect(await hashFile(join(root, 'a.txt'))).toEqual({ sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', size: 3 });
  });
});
