import { readFile } from 'node:fs/promises';
import type { Context } from '../types';
import { UsageError } from '../errors';
import { sanitizeLine } from '../output/sanitize';
import { CsvSyntaxError, parseCsv, type CsvRecord } from './csv';

/**
 * Reading a batch's input: a CSV with a header row, NDJSON, or `-` for stdin. A job names its
 * columns and checks each row with the contract's own zod rules (see `checkRows`); every problem
 * of the whole input is listed before anything is sent.
 */

/** One row of input before it is checked: where it came from, and its fields or why it could not be read. */
export interface RawRow {
  /** The 1-based line the row starts on. */
  line: number;
  /** `line 7` of a file, `argument 2` on the command line: for messages. */
  origin: string;
  /** Undefined when the line could not be read at all (`problem` says why). */
  fields?: Record<string, unknown>;
  problem?: string;
}

/**
 * The whole text of `--from FILE` / `<file>` (`-`: stdin), without a UTF-8 byte-order mark.
 * `flag` names the input in messages (`--from clients.csv: no such file`).
 */
export async function readInputText(ctx: Pick<Context, 'io'>, path: string, flag: string): Promise<string> {
  let text: string;
  if (path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const what = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code})`;
      throw new UsageError(`${flag === '' ? '' : `${flag} `}${path}: ${what}`);
    }
  }
  return text.replace(/^\uFEFF/, '');
}

/** The name an input goes by in messages: `stdin` for `-`. */
export function sourceName(path: string): string {
  return path === '-' ? 'stdin' : path;
}

/** The first non-blank line, trimmed: what tells the format (`{` starts NDJSON). */
export function firstLine(content: string): string | undefined {
  return content
    .split(/\r?\n/)
    .find((line) => line.trim() !== '')
    ?.trim();
}

/**
 * NDJSON rows: one JSON object a line, blank lines skipped. A key outside `columns` makes the row
 * unreadable; `example` shows a good line in the message.
 */
export function ndjsonRows(content: string, columns: readonly string[], example: string): RawRow[] {
  const rows: RawRow[] = [];
  content.split(/\r?\n/).forEach((text, index) => {
    if (text.trim() === '') return;
    const line = index + 1;
    const origin = `line ${line}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      rows.push({ line, origin, problem: 'is not valid JSON (NDJSON needs one JSON object a line)' });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      rows.push({ line, origin, problem: `must be a JSON object such as ${example}` });
      return;
    }
    // Checked here, before the schema: a key such as `constructor` or `__proto__` must read as an
    // unknown field, like any other, and never as a member of an object's prototype.
    const unknown = Object.keys(value).filter((key) => !columns.includes(key));
    if (unknown.length > 0) {
      rows.push({ line, origin, problem: `has unknown field ${unknown.map((key) => JSON.stringify(sanitizeLine(key))).join(', ')}; fields are ${columns.join(', ')}` });
      return;
    }
    rows.push({ line, origin, fields: value as Record<string, unknown> });
  });
  return rows;
}

/**
 * A CSV's records, read whole: a syntax error, the header's included, is the usage error
 * `<source>: line 3: why` (exit 2).
 */
export function csvRecords(content: string, source: string): CsvRecord[] {
  try {
    return parseCsv(content);
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new UsageError(`${source}: line ${error.line}: ${error.message}`);
    throw error;
  }
}

/** A CSV's column names: those of its first record (a quoted name may span lines), trimmed. */
export function csvHeader(header: CsvRecord): string[] {
  return header.fields.map((name) => name.trim());
}

/**
 * The rows of a CSV's records (`csvRecords`) under its header row naming `columns` (any subset,
 * any order; an unknown or repeated column fails the whole input). Cells are trimmed; an empty
 * cell means "not given".
 */
export function csvRows(records: readonly CsvRecord[], source: string, columns: readonly string[]): RawRow[] {
  const [header, ...body] = records;
  if (header === undefined) return [];
  const names = csvHeader(header);
  const unknown = names.filter((name) => !columns.includes(name));
  if (unknown.length > 0) {
    throw new UsageError(`${source}: line ${header.line}: unknown column ${unknown.map((name) => JSON.stringify(sanitizeLine(name))).join(', ')}; columns are ${columns.join(', ')}`);
  }
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) throw new UsageError(`${source}: line ${header.line}: column "${repeated}" appears twice`);

  return body.map((record) => {
    const origin = `line ${record.line}`;
    if (record.fields.length !== names.length) {
      return { line: record.line, origin, problem: `has ${record.fields.length} fields; the header has ${names.length}` };
    }
    const fields: Record<string, unknown> = {};
    names.forEach((name, index) => {
      const value = record.fields[index]!.trim();
      // An empty cell means "not given": the flag's value or the service's default applies.
      if (value !== '') fields[name] = value;
    });
    return { line: record.line, origin, fields };
  });
}

/** One input row that cannot be sent, and every reason why (`email: must be a valid email`). */
export interface RowProblem {
  line: number;
  origin: string;
  /** False when the line could not be read at all (bad JSON, wrong number of fields). */
  readable: boolean;
  problems: string[];
  /** The row's fields as read, when it could be read (to echo its email beside its problems). */
  fields?: Record<string, unknown>;
}

/**
 * Checks every row with `check` (the job's own rules, which see the rows before it: duplicates).
 * `check` returns the item, or the row's problems. Nothing stops at the first bad row.
 */
export function checkRows<I>(rows: readonly RawRow[], check: (row: RawRow & { fields: Record<string, unknown> }) => { item: I } | { problems: string[] }): {
  items: I[];
  bad: RowProblem[];
} {
  const items: I[] = [];
  const bad: RowProblem[] = [];
  for (const row of rows) {
    if (row.fields === undefined) {
      bad.push({ line: row.line, origin: row.origin, readable: false, problems: [row.problem ?? 'cannot be read'] });
      continue;
    }
    const checked = check(row as RawRow & { fields: Record<string, unknown> });
    if ('item' in checked) items.push(checked.item);
    else bad.push({ line: row.line, origin: row.origin, readable: true, problems: checked.problems, fields: row.fields });
  }
  return { items, bad };
}

/** How many problems a usage error lists before summarising the rest. */
export const MAX_LISTED_PROBLEMS = 10;

/**
 * The usage error (exit 2) for an input with bad rows: `<source> has 3 bad lines; nothing was
 * sent:` and one problem a line (the first `listed`), every problem in `details.problems`.
 */
export function badRowsError(source: string, problems: readonly string[], badLines: number, options: { listed?: number; hint?: string } = {}): UsageError {
  const shown = problems.slice(0, options.listed ?? MAX_LISTED_PROBLEMS);
  const more = problems.length - shown.length;
  return new UsageError(
    `${source} has ${badLines} bad line${badLines === 1 ? '' : 's'}; nothing was sent:\n  ${shown.join('\n  ')}${more > 0 ? `\n  (and ${more} more)` : ''}`,
    { details: { problems: [...problems] }, ...(options.hint === undefined ? {} : { hint: options.hint }) },
  );
}
