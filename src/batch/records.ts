import { open, type FileHandle } from 'node:fs/promises';
import { UsageError } from '../errors';

/** A cell of a record file: written as is in NDJSON, as text in CSV (empty for null/undefined). */
export type RecordValue = string | number | boolean | null | undefined;

/** A file of one record a line (`--results`, `--links`): CSV with a header when the name ends in .csv, else NDJSON. */
export interface RecordFile {
  readonly path: string;
  /** Writes one record (its `columns` in order for CSV), in the order called. */
  write(record: Record<string, RecordValue>): Promise<void>;
  close(): Promise<void>;
}

/** RFC 4180: a cell with a comma, quote, line break or edge space is quoted, quotes doubled. */
export function csvCell(value: RecordValue): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Opens a record file, always private (0600: results name clients, links are credentials, and a
 * file given again keeps that mode). `append` keeps what an earlier run wrote (login links exist
 * only in the answer that made them), else the file starts empty. A CSV gets its header when it
 * is empty. Fails as a usage error (exit 2) before anything is sent when the file cannot be opened.
 */
export async function openRecordFile(path: string, columns: readonly string[], options: { append: boolean; flag: string }): Promise<RecordFile> {
  let handle: FileHandle;
  try {
    handle = await open(path, options.append ? 'a' : 'w', 0o600);
    await handle.chmod(0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${options.flag} ${path}: cannot be written (${code === 'EISDIR' ? 'is a directory' : code}); nothing was sent`);
  }
  const csv = /\.csv$/i.test(path);
  let chain: Promise<void> = Promise.resolve();
  const writeLine = (line: string) => {
    // Written, not fsync'd: a killed process loses nothing written, and a run again rewrites results.
    chain = chain.then(async () => {
      await handle.write(line);
    });
    return chain;
  };
  if (csv && (await handle.stat()).size === 0) await writeLine(`${columns.map(csvCell).join(',')}\r\n`);
  return {
    path,
    write: (record) =>
      writeLine(csv ? `${columns.map((column) => csvCell(record[column])).join(',')}\r\n` : `${JSON.stringify(Object.fromEntries(columns.map((column) => [column, record[column] ?? null])))}\n`),
    async close() {
      await chain;
      await handle.close();
    },
  };
}
