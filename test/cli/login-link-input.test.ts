import { describe, expect, it } from 'vitest';
import { itemsFromArguments, parseAccountInput as parseLoginLinkInput } from '../../src/batch/accountInput';
import { parseCsv } from '../../src/batch/csv';
import { UsageError } from '../../src/errors';

function usageMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).message;
  }
  throw new Error('expected a usage error');
}

describe('--from formats', () => {
  it('reads one id a line, skipping blank lines and # comments, with CRLF and a BOM', () => {
    const { format, items } = parseLoginLinkInput('\uFEFF# clients\r\n1001\r\n\r\n 1002 \r\n', 'ids.txt');
    expect(format).toBe('ids');
    expect(items).toEqual([
      { origin: 'line 2', account_id: 1001 },
      { origin: 'line 4', account_id: 1002 },
    ]);
  });

  it('reads a CSV by its header, with quoted fields, any column order and empty cells', () => {
    const csv = 'user_email,account_id,purpose,expiry_hours\n"jane@example.com","1001",support_request,48\n,1002,,\n';
    const { format, items } = parseLoginLinkInput(csv, 'clients.csv');
    expect(format).toBe('csv');
    expect(items).toEqual([
      { origin: 'line 2', account_id: 1001, user_email: 'jane@example.com', purpose: 'support_request', expiry_hours: 48 },
      { origin: 'line 3', account_id: 1002 },
    ]);
  });

  it('reads a one-column CSV whose header is account_id', () => {
    expect(parseLoginLinkInput('account_id\n1001\n', 'f').items).toEqual([{ origin: 'line 2', account_id: 1001 }]);
  });

  it('reads NDJSON objects with the same keys', () => {
    const { format, items } = parseLoginLinkInput('{"account_id":1001}\n\n{"account_id":"1002","user_email":"john@example.com","expiry_hours":1}\n', 'f');
    expect(format).toBe('ndjson');
    expect(items).toEqual([
      { origin: 'line 1', account_id: 1001 },
      { origin: 'line 3', account_id: 1002, user_email: 'john@example.com', expiry_hours: 1 },
    ]);
  });
});

describe('bad input is refused before anything is sent, naming each line and rule', () => {
  it.each([
    ['an id that is not a positive integer', '1001\nabc\n0\n', ['line 2: account_id must be a positive integer', 'line 3: account_id must be a positive integer']],
    ['an expiry outside 1-168', 'account_id,expiry_hours\n1001,169\n1002,1.5\n', ['line 2: expiry_hours must be an integer from 1 to 168', 'line 3: expiry_hours must be an integer from 1 to 168']],
    ['a purpose outside the list', 'account_id,purpose\n1001,because\n', ['line 2: purpose must be one of: initial_access, expired_link, lost_credentials, additional_user, support_request']],
    ['a malformed email', '{"account_id":1,"user_email":"nobody"}\n', ['line 1: user_email must be a valid email address']],
    ['a line that is not JSON', '{"account_id":1}\n{oops\n', ['line 2 is not valid JSON']],
    ['an NDJSON value that is not an object', '{"account_id":1}\n[1]\n', ['line 2 must be a JSON object']],
    ['an unknown NDJSON key', '{"account_id":1,"emial":"a@b.co"}\n', ['line 1 has unknown field "emial"; fields are account_id, user_email, purpose, expiry_hours']],
    ['NDJSON keys named like prototype members', '{"account_id":1,"constructor":"x"}\n{"account_id":2,"__proto__":{"x":1}}\n', ['line 1 has unknown field "constructor"', 'line 2 has unknown field "__proto__"']],
    ['a CSV row with the wrong number of fields', 'account_id,user_email\n1001\n', ['line 2 has 1 fields; the header has 2']],
    ['the same user twice', '1001\n1002\n1001\n', ['line 3: account 1001 repeats line 1; a second link would invalidate the first']],
  ])('%s', (_name, text, expected) => {
    const message = usageMessage(() => parseLoginLinkInput(text, 'input.txt'));
    expect(message).toMatch(/^input\.txt has \d+ bad lines?; nothing was sent:/);
    for (const part of expected) expect(message).toContain(part);
  });

  it('refuses unknown CSV columns, listing the allowed ones', () => {
    expect(usageMessage(() => parseLoginLinkInput('account_id,user_emial\n1001,a@b.co\n', 'c.csv'))).toBe(
      'c.csv: line 1: unknown column "user_emial"; columns are account_id, user_email, purpose, expiry_hours',
    );
  });

  it('refuses an unclosed quote with its line', () => {
    expect(usageMessage(() => parseLoginLinkInput('account_id\n1001\n"1002\n', 'c.csv'))).toBe('c.csv: line 3: a quoted field is not closed');
  });

  it('refuses an empty input', () => {
    expect(usageMessage(() => parseLoginLinkInput('\n  \n', 'stdin'))).toBe('stdin holds no account ids');
  });

  it('lists at most ten bad lines and counts the rest', () => {
    const message = usageMessage(() => parseLoginLinkInput(`${Array.from({ length: 12 }, () => 'x').join('\n')}\n`, 'f'));
    expect(message).toContain('f has 12 bad lines');
    expect(message).toContain('(and 2 more)');
  });

  it('names arguments by position', () => {
    expect(usageMessage(() => itemsFromArguments(['1001', '-5']))).toContain('argument 2: account_id must be a positive integer');
  });
});

describe('parseCsv', () => {
  it('handles doubled quotes, commas and newlines inside quotes, and reports the starting line', () => {
    expect(parseCsv('a,b\n"x ""y"", z","multi\nline"\nlast,row')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['x "y", z', 'multi\nline'] },
      { line: 4, fields: ['last', 'row'] },
    ]);
  });
});
