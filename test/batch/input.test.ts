import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CsvSyntaxError, parseCsv } from '../../src/batch/csv';
import { badRowsError, checkRows, csvRecords, csvRows, firstLine, ndjsonRows, readInputText, sourceName, type RawRow } from '../../src/batch/input';
import { UsageError } from '../../src/errors';
import type { Context } from '../../src/types';

/**
 * The readers under every batch input (`accounts import`, `login-link --from`, `renew`, `docs sync
 * --manifest`, `--accounts`): the CSV parser (src/batch/csv.ts) and the rows, refusals and
 * messages of src/batch/input.ts. What they refuse is what a user reads: the messages are exact.
 */

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

function syntaxError(text: string): { line: number; message: string } {
  const error = thrown(() => parseCsv(text));
  expect(error).toBeInstanceOf(CsvSyntaxError);
  return { line: (error as CsvSyntaxError).line, message: (error as CsvSyntaxError).message };
}

function usageMessage(run: () => unknown): string {
  const error = thrown(run);
  expect(error).toBeInstanceOf(UsageError);
  return (error as UsageError).message;
}

const QUOTE_INSIDE = 'a quote may only start a field ("..."); write "" for a quote inside a quoted field';

describe('parseCsv', () => {
  it('skips blank lines, counting them, and keeps a line of one empty quoted field or of empty fields', () => {
    expect(parseCsv('a\n\n\nb\n""\n,\n')).toEqual([
      { line: 1, fields: ['a'] },
      { line: 4, fields: ['b'] },
      { line: 5, fields: [''] },
      { line: 6, fields: ['', ''] },
    ]);
    expect(parseCsv('\n\n')).toEqual([]);
  });

  it('ends a record at LF, CRLF or a lone CR, counting each as one line; a CRLF inside quotes is kept', () => {
    expect(parseCsv('a\r\nb\rc\n"d\r\ne"\r\nf')).toEqual([
      { line: 1, fields: ['a'] },
      { line: 2, fields: ['b'] },
      { line: 3, fields: ['c'] },
      { line: 4, fields: ['d\r\ne'] },
      { line: 6, fields: ['f'] },
    ]);
  });

  it('reads a last record without a line end: a trailing empty field, an empty quoted field', () => {
    expect(parseCsv('a,')).toEqual([{ line: 1, fields: ['a', ''] }]);
    expect(parseCsv('x\n""')).toEqual([
      { line: 1, fields: ['x'] },
      { line: 2, fields: [''] },
    ]);
    expect(parseCsv('x\n"q"""')).toEqual([
      { line: 1, fields: ['x'] },
      { line: 2, fields: ['q"'] },
    ]);
  });

  it('starts each field and record unquoted: text after a quoted field of an earlier field or record is read', () => {
    expect(parseCsv('"a",b\n"c"\nd,"e"')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['c'] },
      { line: 3, fields: ['d', 'e'] },
    ]);
  });

  it('refuses a quote inside an unquoted field, text after a closing quote, and an unclosed quote, each by its line', () => {
    expect(syntaxError('ok\nab"c\n')).toEqual({ line: 2, message: QUOTE_INSIDE });
    expect(syntaxError('ok\n"multi\nline"x\n')).toEqual({ line: 3, message: 'unexpected text after a closing quote' });
    // An unclosed quote is named by the line its record starts on, not the end of the text.
    expect(syntaxError('ok\n"never\nclosed\n')).toEqual({ line: 2, message: 'a quoted field is not closed' });
  });

  it('is a CsvSyntaxError by name', () => {
    expect(thrown(() => parseCsv('"'))).toMatchObject({ name: 'CsvSyntaxError', line: 1 });
  });
});

describe('the rows of a CSV', () => {
  const columns = ['account_id', 'user_email', 'purpose'];

  it('a syntax error is a usage error naming the source and the line', () => {
    expect(usageMessage(() => csvRecords('account_id\n1\n2"x\n', 'ids.csv'))).toBe(`ids.csv: line 3: ${QUOTE_INSIDE}`);
  });

  it('reads any subset of the columns in any order, trimming cells; an empty cell is not given', () => {
    const records = csvRecords(' purpose , account_id\n  support_request ,  1001 \n,1002\n', 'f.csv');
    expect(csvRows(records, 'f.csv', columns)).toEqual([
      { line: 2, origin: 'line 2', fields: { purpose: 'support_request', account_id: '1001' } },
      { line: 3, origin: 'line 3', fields: { account_id: '1002' } },
    ]);
    expect(csvRows([], 'f.csv', columns)).toEqual([]);
  });

  it('a row with too few or too many fields cannot be read, and says how many the header has', () => {
    expect(csvRows(csvRecords('account_id,purpose\n1001\n1002,a,b\n', 'f.csv'), 'f.csv', columns)).toEqual([
      { line: 2, origin: 'line 2', problem: 'has 1 fields; the header has 2' },
      { line: 3, origin: 'line 3', problem: 'has 3 fields; the header has 2' },
    ]);
  });

  it('refuses the whole input for unknown columns (each named, on one printable line) or a column given twice', () => {
    expect(usageMessage(() => csvRows(csvRecords('\naccount_id,emial,"bad\u001b[31m\nname"\n', 'f.csv'), 'f.csv', columns))).toBe(
      'f.csv: line 2: unknown column "emial", "bad name"; columns are account_id, user_email, purpose',
    );
    expect(usageMessage(() => csvRows(csvRecords('account_id,purpose, account_id\n', 'f.csv'), 'f.csv', columns))).toBe('f.csv: line 1: column "account_id" appears twice');
  });
});

describe('NDJSON rows', () => {
  const example = '{"account_id": 1001}';

  it('one object a line, blank lines skipped and counted; anything else named by its line with the rule', () => {
    const text = '{"account_id":1}\n\n   \n{oops\nnull\n5\n[1]\n"text"\n{"account_id":2,"emial":"a@b.co","x\\u001b[31my":1}\r\n{"account_id":3}';
    expect(ndjsonRows(text, ['account_id', 'user_email'], example)).toEqual([
      { line: 1, origin: 'line 1', fields: { account_id: 1 } },
      { line: 4, origin: 'line 4', problem: 'is not valid JSON (NDJSON needs one JSON object a line)' },
      { line: 5, origin: 'line 5', problem: `must be a JSON object such as ${example}` },
      { line: 6, origin: 'line 6', problem: `must be a JSON object such as ${example}` },
      { line: 7, origin: 'line 7', problem: `must be a JSON object such as ${example}` },
      { line: 8, origin: 'line 8', problem: `must be a JSON object such as ${example}` },
      { line: 9, origin: 'line 9', problem: 'has unknown field "emial", "xy"; fields are account_id, user_email' },
      { line: 10, origin: 'line 10', fields: { account_id: 3 } },
    ]);
  });
});

describe('the first line, which tells the format', () => {
  it('is the first line with text, trimmed, whatever the line ends', () => {
    expect(firstLine('\n  \r\n  {"a":1}  \r\nnext')).toBe('{"a":1}');
    expect(firstLine('account_id\n1001')).toBe('account_id');
    expect(firstLine('account_id\r\n1001')).toBe('account_id');
    expect(firstLine(' \n\t\n')).toBeUndefined();
  });
});

describe('checking rows', () => {
  it('keeps every item, and every bad row with its problems, in input order; an unreadable row says why', () => {
    const rows: RawRow[] = [
      { line: 1, origin: 'line 1', fields: { n: '1' } },
      { line: 2, origin: 'line 2', problem: 'is not valid JSON' },
      { line: 3, origin: 'line 3', fields: { n: 'x' } },
      { line: 4, origin: 'line 4' },
      { line: 5, origin: 'line 5', fields: { n: '5' } },
    ];
    const seen: unknown[] = [];
    const result = checkRows<number>(rows, (row) => {
      seen.push(row.line);
      const n = Number(row.fields.n);
      return Number.isNaN(n) ? { problems: ['n must be a number', 'n is required'] } : { item: n };
    });
    expect(seen).toEqual([1, 3, 5]);
    expect(result).toEqual({
      items: [1, 5],
      bad: [
        { line: 2, origin: 'line 2', readable: false, problems: ['is not valid JSON'] },
        { line: 3, origin: 'line 3', readable: true, problems: ['n must be a number', 'n is required'], fields: { n: 'x' } },
        { line: 4, origin: 'line 4', readable: false, problems: ['cannot be read'] },
      ],
    });
  });
});

describe('the refusal of an input with bad rows (exit 2)', () => {
  const problems = (count: number) => Array.from({ length: count }, (_, index) => `line ${index + 2}: email is required`);

  it('one bad line, in the singular, every problem listed, no hint unless given', () => {
    const error = badRowsError('clients.csv', problems(1), 1);
    expect(error).toBeInstanceOf(UsageError);
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe('clients.csv has 1 bad line; nothing was sent:\n  line 2: email is required');
    expect(error.details).toEqual({ problems: ['line 2: email is required'] });
    expect(error.hint).toBeUndefined();
  });

  it('ten listed, then how many more; all of them in the details', () => {
    const error = badRowsError('stdin', problems(12), 12);
    expect(error.message.split('\n')).toEqual(['stdin has 12 bad lines; nothing was sent:', ...problems(10).map((problem) => `  ${problem}`), '  (and 2 more)']);
    expect(error.details).toEqual({ problems: problems(12) });
    expect(badRowsError('stdin', problems(10), 10).message).not.toContain('more');
  });

  it('as many listed as asked, with the hint given', () => {
    const error = badRowsError('f', problems(3), 2, { listed: 2, hint: 'Fix those lines.' });
    expect(error.message).toBe('f has 2 bad lines; nothing was sent:\n  line 2: email is required\n  line 3: email is required\n  (and 1 more)');
    expect(error.hint).toBe('Fix those lines.');
  });
});

describe('reading an input', () => {
  const ctxWith = (chunks: Array<string | Buffer>) => ({ io: { stdin: Readable.from(chunks) } }) as unknown as Pick<Context, 'io'>;
  const noStdin = ctxWith([]);

  it('`-` reads stdin to its end, in chunks of text or bytes (a character split between chunks kept whole), without a byte-order mark', async () => {
    const euro = Buffer.from('€');
    expect(await readInputText(ctxWith(['\uFEFFaccount_id\n', '1001\n']), '-', '--from')).toBe('account_id\n1001\n');
    expect(await readInputText(ctxWith([Buffer.concat([Buffer.from('\uFEFFa'), euro.subarray(0, 1)]), euro.subarray(1)]), '-', '--from')).toBe('a€');
  });

  it('a file, without its byte-order mark; one further in is text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-input-'));
    writeFileSync(join(dir, 'ids.txt'), '\uFEFF1001\n\uFEFF1002\n');
    expect(await readInputText(noStdin, join(dir, 'ids.txt'), '--from')).toBe('1001\n\uFEFF1002\n');
    writeFileSync(join(dir, 'inner.txt'), '1001\n\uFEFF1002\n');
    expect(await readInputText(noStdin, join(dir, 'inner.txt'), '--from')).toBe('1001\n\uFEFF1002\n');
  });

  it('a file that cannot be read: a usage error naming the flag (when there is one), the path and why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-input-'));
    writeFileSync(join(dir, 'file'), '');
    const refusal = async (path: string, flag: string) => {
      const error = await readInputText(noStdin, path, flag).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(UsageError);
      return (error as UsageError).message;
    };
    expect(await refusal(join(dir, 'gone.csv'), '--from')).toBe(`--from ${join(dir, 'gone.csv')}: no such file`);
    expect(await refusal(dir, '--manifest')).toBe(`--manifest ${dir}: is a directory`);
    expect(await refusal(join(dir, 'file', 'x'), '')).toBe(`${join(dir, 'file', 'x')}: cannot be read (ENOTDIR)`);
  });

  it('is named `stdin` for `-`, else by its path', () => {
    expect(sourceName('-')).toBe('stdin');
    expect(sourceName('clients.csv')).toBe('clients.csv');
  });
});
