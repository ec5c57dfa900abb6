import { createHash } from 'node:crypto';
import { open, readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CANONICAL_ID } from '../../../contract/rules';
import { TAX_YEAR } from '../../../contract/vocabulary';
import { fileErrorProblem } from '../files';
import { UsageError } from '../../../errors';

const LAYOUT_HINT = 'Give the folder laid out as <account-id>/<tax-year>/<file>, or holding the files a --manifest names (see `taxprep docs sync --help`).';

/**
 * Where `docs sync` finds its files: a walk of `<dir>/<account-id>/<tax-year>/<file>`, or the
 * rows of a manifest naming files under `<dir>`. Both give the same thing: the files to consider,
 * each with its account and tax year, the entries left out on purpose (counted), and the entries
 * that cannot be synced (each with its problem, all of them before anything is sent).
 */

/** One file to sync, where it is and where it goes. */
export interface SyncSource {
  /** As the user can find it: relative to `<dir>` (`1001/2025/w2.pdf`). */
  relative: string;
  path: string;
  account_id: number;
  tax_year: number;
  description?: string;
  /** The manifest line it came from. */
  line?: number;
  /** The size the walk saw (a manifest's files are looked at when they are hashed). */
  size?: number;
}

export interface SourceProblem {
  /** The entry at fault: a path relative to `<dir>`, or `line N` of a manifest. */
  where: string;
  field?: string;
  problem: string;
}

/** Entries left out on purpose, counted for the summary. */
export interface LeftOut {
  hidden: number;
  excluded: number;
  notRegular: number;
}

export interface SourceList {
  sources: SyncSource[];
  problems: SourceProblem[];
  leftOut: LeftOut;
}

/**
 * A shell glob as a regular expression: `*` and `?` within one path segment, `**` across them,
 * `[abc]` and `[!abc]` classes; anything else literal.
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index += 1) {
    const character = glob[index]!;
    if (character === '*' && glob[index + 1] === '*') {
      // `**/` also matches no directory at all: `**/x` matches `x`.
      const slash = glob[index + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      index += slash ? 2 : 1;
    } else if (character === '*') source += '[^/]*';
    else if (character === '?') source += '[^/]';
    else if (character === '[' && glob.indexOf(']', index + 2) > index) {
      const end = glob.indexOf(']', index + 2);
      const body = glob.slice(index + 1, end);
      const negated = body.startsWith('!') || body.startsWith('^');
      source += `[${negated ? '^' : ''}${(negated ? body.slice(1) : body).replace(/[\\\]^]/g, '\\$&')}]`;
      index = end;
    } else source += character.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/**
 * `--exclude` as rsync reads it: a pattern without `/` is matched against the name of every file
 * and directory at any depth (`drafts`, `*.tmp`); one with `/` against the path from `<dir>`
 * (`1001/2023`). An excluded directory leaves out everything under it.
 */
export function excluder(globs: readonly string[]): (relativePath: string) => boolean {
  const byName = globs.filter((glob) => !glob.includes('/')).map(globToRegExp);
  const byPath = globs.filter((glob) => glob.includes('/')).map((glob) => globToRegExp(glob.replace(/^\/+|\/+$/g, '')));
  const matches = (path: string) => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    return byName.some((pattern) => pattern.test(name)) || byPath.some((pattern) => pattern.test(path));
  };
  // The path or any directory on it: a manifest names files, not the directories a walk would skip.
  return (relativePath) => relativePath.split('/').some((_, index, parts) => matches(parts.slice(0, index + 1).join('/')));
}

const isHidden = (name: string) => name.startsWith('.');
const slashed = (path: string) => path.split(sep).join('/');

/** Why a directory name cannot be an account id or a tax year, or undefined when it can. */
export function accountIdProblem(name: string): string | undefined {
  return CANONICAL_ID.test(name) ? undefined : 'is not an account id (a positive integer written plainly, such as 1001)';
}

export function taxYearProblem(name: string): string | undefined {
  const year = /^\d{4}$/.test(name) ? Number(name) : NaN;
  return year >= TAX_YEAR.min && year <= TAX_YEAR.max ? undefined : 'is not a tax year (a year of four digits)';
}

/**
 * Walks `<dir>/<account-id>/<tax-year>/<file>`, following symbolic links (a link that loops, or a
 * directory inside itself, is a problem), in name order so that plans and results read the same on
 * every run. Hidden entries, excluded ones and what is not a regular file or directory are counted,
 * not listed; anything else out of the layout is a problem.
 */
export async function walkLayout(dir: string, excludes: readonly string[]): Promise<SourceList> {
  const excluded = excluder(excludes);
  const list: SourceList = { sources: [], problems: [], leftOut: { hidden: 0, excluded: 0, notRegular: 0 } };
  const root = resolve(dir);

  const visit = async (path: string, depth: number, parts: string[], ancestors: Set<string>): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(path)).sort();
    } catch (error) {
      list.problems.push({ where: parts.length === 0 ? dir : parts.join('/'), problem: `cannot be listed: ${fileErrorProblem(error)}` });
      return;
    }
    for (const name of names) {
      const entryParts = [...parts, name];
      const where = entryParts.join('/');
      if (isHidden(name)) {
        list.leftOut.hidden += 1;
        continue;
      }
      if (excluded(where)) {
        list.leftOut.excluded += 1;
        continue;
      }
      const entryPath = join(path, name);
      let info;
      try {
        info = await stat(entryPath);
      } catch (error) {
        list.problems.push({ where, problem: fileErrorProblem(error) });
        continue;
      }
      if (info.isDirectory()) {
        const identity = `${info.dev}:${info.ino}`;
        if (ancestors.has(identity)) {
          list.problems.push({ where, problem: 'is a symbolic link that loops (a directory inside itself)' });
          continue;
        }
        if (depth === 0 && accountIdProblem(name)) list.problems.push({ where, problem: `${accountIdProblem(name)}; the layout is <account-id>/<tax-year>/<file>` });
        else if (depth === 1 && taxYearProblem(name)) list.problems.push({ where, problem: `${taxYearProblem(name)}; the layout is <account-id>/<tax-year>/<file>` });
        else if (depth >= 2) list.problems.push({ where, problem: 'is a directory below <account-id>/<tax-year>; the layout is <account-id>/<tax-year>/<file>' });
        else await visit(entryPath, depth + 1, entryParts, new Set([...ancestors, identity]));
        continue;
      }
      if (!info.isFile()) {
        list.leftOut.notRegular += 1;
        continue;
      }
      if (depth < 2) {
        list.problems.push({ where, problem: 'is not inside <account-id>/<tax-year>/; the layout is <account-id>/<tax-year>/<file>' });
        continue;
      }
      list.sources.push({ relative: where, path: entryPath, account_id: Number(parts[0]), tax_year: Number(parts[1]), size: info.size });
    }
  };

  // The folder itself missing is not an entry to --exclude or --skip-invalid: nothing can be synced.
  let top;
  try {
    top = await stat(root);
  } catch (error) {
    throw new UsageError(`${dir} ${fileErrorProblem(error)}; nothing was sent`, { hint: LAYOUT_HINT });
  }
  if (!top.isDirectory()) throw new UsageError(`${dir} is not a directory; nothing was sent`, { hint: LAYOUT_HINT });
  await visit(root, 0, [], new Set([`${top.dev}:${top.ino}`]));
  return list;
}

/** A manifest row as read: the fields named in its header (CSV) or keys (NDJSON). */
export interface ManifestRow {
  line: number;
  path: string;
  account_id: number;
  tax_year: number;
  description?: string;
}

/**
 * A manifest row's file under `<dir>`: its path is taken from `<dir>` when relative, and must not
 * lead out of it (`../x`, or an absolute path elsewhere). Hidden and excluded paths are left out as
 * in a walk; the file itself is checked when it is hashed.
 */
export function manifestSource(dir: string, row: ManifestRow, excluded: (relativePath: string) => boolean): SyncSource | SourceProblem | 'hidden' | 'excluded' {
  const root = resolve(dir);
  const path = isAbsolute(row.path) ? resolve(row.path) : resolve(root, row.path);
  const inside = slashed(relative(root, path));
  if (inside === '' || inside === '..' || inside.startsWith('../') || isAbsolute(inside)) {
    return { where: `line ${row.line}`, field: 'path', problem: `${row.path} is outside ${dir}` };
  }
  if (inside.split('/').some(isHidden)) return 'hidden';
  if (excluded(inside)) return 'excluded';
  return { relative: inside, path, account_id: row.account_id, tax_year: row.tax_year, line: row.line, ...(row.description === undefined ? {} : { description: row.description }) };
}

/** How much of a file is read at a time when hashing. */
export const HASH_CHUNK_BYTES = 64 * 1024;

/**
 * A file's sha256 (hex) and size, read a chunk at a time into `buffer` (memory stays flat whatever
 * the size, and a caller hashing many files reuses one buffer instead of a stream's per file).
 */
export async function hashFile(path: string, buffer: Buffer = Buffer.allocUnsafe(HASH_CHUNK_BYTES)): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  const handle = await open(path, 'r');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      size += bytesRead;
    }
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), size };
}
