import { PassThrough } from 'node:stream';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { renderCard } from '../../src/output/card';
import { colorStatus, palette } from '../../src/output/colors';
import { formatTimestamp, relativeTime } from '../../src/output/dates';
import { createFormat } from '../../src/output/format';
import { JsonListWriter, formatJson, formatNdjsonLine } from '../../src/output/json';
import { listMode } from '../../src/output/listing';
import { clampPercent, formatBytes, progressBar } from '../../src/output/progress';
import { escapeJsonForTerminal, sanitizeDeep, sanitizeLine, sanitizeText } from '../../src/output/sanitize';
import { dateColumn, fitWidths, freeText, label, renderTable, truncate } from '../../src/output/table';

const NOW = new Date('2026-11-17T10:15:00Z');
const ESC = '\u001b';

describe('sanitising service strings', () => {
  it.each([
    ['colour codes', `${ESC}[31mred${ESC}[0m`, 'red'],
    ['cursor movement and screen clearing', `a${ESC}[2J${ESC}[H${ESC}[10;5Hb`, 'ab'],
    ['an OSC title change ended by BEL', `${ESC}]0;pwned\u0007name`, 'name'],
    ['an OSC 8 hyperlink ended by ST', `${ESC}]8;;https://evil.test${ESC}\\click${ESC}]8;;${ESC}\\`, 'click'],
    ['the 8-bit CSI', '\u009b31mx', 'x'],
    ['bell, backspace, NUL and DEL', 'a\u0007\b\u0000\u007fb', 'ab'],
    ['bidirectional overrides', 'invoice\u202Efdp.exe', 'invoicefdp.exe'],
    ['line breaks and tabs, as spaces', 'one\ntwo\r\nthree\tfour\rfive', 'one two three four five'],
  ])('sanitizeLine strips %s', (_what, input, expected) => {
    expect(sanitizeLine(input)).toBe(expected);
  });

  it('keeps printable Unicode, numbers and empty values readable', () => {
    expect(sanitizeLine('Zoë Łukasz 税 ✓')).toBe('Zoë Łukasz 税 ✓');
    expect(sanitizeLine(1001)).toBe('1001');
    expect(sanitizeLine(null)).toBe('');
    expect(sanitizeLine(undefined)).toBe('');
  });

  it('sanitizeText keeps line breaks but nothing else', () => {
    expect(sanitizeText(`Line one\r\nline ${ESC}[1mtwo${ESC}[0m\tend\u0007`)).toBe('Line one\nline two end');
  });
});

describe('progress and sizes', () => {
  it.each([
    [0, '░░░░░░░░░░   0%'],
    [45, '████░░░░░░  45%'],
    [100, '██████████ 100%'],
    [150, '██████████ 100%'],
    [-5, '░░░░░░░░░░   0%'],
  ])('progressBar(%d)', (percent, expected) => {
    expect(progressBar(percent)).toBe(expected);
  });

  it('clamps what is not a finite percentage', () => {
    expect(clampPercent(Number.NaN)).toBe(0);
    expect(clampPercent(44.6)).toBe(45);
  });

  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1536, '1.5 KB'],
    [5 * 1024 * 1024, '5.0 MB'],
  ])('formatBytes(%d)', (bytes, expected) => {
    expect(formatBytes(bytes)).toBe(expected);
  });
});

describe('dates', () => {
  it.each([
    ['2026-11-23T10:15:00Z', 'in 6 days'],
    ['2026-11-24T10:14:59Z', 'in 7 days'],
    ['2026-11-18T09:00:00Z', 'in 23 hours'],
    ['2026-11-17T13:15:00Z', 'in 3 hours'],
    ['2026-11-17T10:14:30Z', 'just now'],
    ['2026-11-17T09:14:00Z', '1 hour ago'],
    ['2025-10-01T00:00:00Z', '1 year ago'],
  ])('relativeTime(%s)', (iso, expected) => {
    expect(relativeTime(new Date(iso), NOW)).toBe(expected);
  });

  it('is readable for people and unchanged for programs', () => {
    expect(formatTimestamp('2026-11-23T10:15:00.000Z', { readable: true, now: NOW })).toBe('2026-11-23 10:15 UTC (in 6 days)');
    expect(formatTimestamp('2026-11-23T10:15:00.000Z', { readable: false, now: NOW })).toBe('2026-11-23T10:15:00.000Z');
  });

  it('shows a value that is not a date as it came, sanitised', () => {
    expect(formatTimestamp(`soon${ESC}[2J`, { readable: true, now: NOW })).toBe('soon');
  });
});

describe('colours', () => {
  it('colours known statuses only when enabled', () => {
    expect(colorStatus(palette(true), 'completed')).toBe('\u001b[32mcompleted\u001b[39m');
    expect(colorStatus(palette(true), 'waiting_on_client')).toBe('\u001b[33mwaiting_on_client\u001b[39m');
    expect(colorStatus(palette(true), 'suspended')).toBe('\u001b[31msuspended\u001b[39m');
    expect(colorStatus(palette(false), 'completed')).toBe('completed');
  });

  it('leaves a status this version does not know uncoloured', () => {
    expect(colorStatus(palette(true), 'archived')).toBe('archived');
  });
});

describe('the format for people and for programs', () => {
  const forPeople = createFormat({ readable: true, colors: palette(true), now: NOW });
  const forPrograms = createFormat({ readable: false, colors: palette(false), now: NOW });

  it('draws progress as a bar for people and as a number for programs', () => {
    expect(forPeople.progress(45)).toBe('████░░░░░░  45%');
    expect(forPrograms.progress(45)).toBe('45%');
  });

  it('leaves shortening to the table, which knows the terminal', () => {
    const long = 'x'.repeat(60);
    expect(forPeople.text(long)).toBe(long);
    expect(forPrograms.text(long)).toBe(long);
  });

  it('sanitises a status before colouring it', () => {
    expect(forPeople.status(`completed${ESC}[2J`)).toBe('\u001b[32mcompleted\u001b[39m');
  });

  it('shows a missing date as a dash', () => {
    expect(forPeople.date(null)).toBe('-');
  });
});

describe('JSON', () => {
  const document = { id: 1, nested: { unknown_field: ['a'] } };

  it('is pretty on a terminal and one compact line otherwise, with one trailing newline', () => {
    expect(formatJson(document, true)).toBe(`${JSON.stringify(document, null, 2)}\n`);
    expect(formatJson(document, false)).toBe('{"id":1,"nested":{"unknown_field":["a"]}}\n');
  });

  it('writes one item a line for --ndjson', () => {
    expect(formatNdjsonLine({ id: 2, text: 'a\nb' })).toBe('{"id":2,"text":"a\\nb"}\n');
  });

  async function streamed(items: unknown[], pretty: boolean): Promise<string> {
    const stream = new PassThrough();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const writer = new JsonListWriter(stream, 'documents', pretty);
    for (const item of items) await writer.add(item);
    await writer.end({ total_count: items.length, has_more: false });
    return Buffer.concat(chunks).toString('utf8');
  }

  it.each([true, false])('streams a list as exactly the text of one whole document (pretty: %s)', async (pretty) => {
    for (const items of [[], [document], [document, { id: 2 }, { id: 3, s: 'x' }]]) {
      const whole = { documents: items, total_count: items.length, has_more: false };
      const text = await streamed(items, pretty);
      expect(text).toBe(formatJson(whole, pretty));
      expect(JSON.parse(text)).toEqual(whole);
    }
  });
});

describe('tables and cards', () => {
  const rows = [
    ['1', 'w2.pdf', '2024'],
    ['22', 'a much longer name.pdf', '2023'],
  ];

  it('prints tab-separated rows without a header off a terminal', async () => {
    expect(await renderTable(['ID', 'Filename', 'Tax year'], rows, { tty: false, colors: palette(false), columns: 10 })).toBe(
      '1\tw2.pdf\t2024\n22\ta much longer name.pdf\t2023\n',
    );
  });

  it('prints an aligned table with a header on a terminal', async () => {
    const text = await renderTable(['ID', 'Filename', 'Tax year'], rows, { tty: true, colors: palette(false), columns: 80 });
    expect(text.split('\n')).toEqual([
      'ID  FILENAME                TAX YEAR',
      '1   w2.pdf                  2024',
      '22  a much longer name.pdf  2023',
      '',
    ]);
  });

  it('truncates by display width, between grapheme clusters', () => {
    expect(truncate('😀😀😀😀', 5, stringWidth)).toBe('😀😀…');
    expect(truncate('日本語のテキスト', 8, stringWidth)).toBe('日本語…');
    // A wide character that would straddle the edge is left out, not split.
    expect(truncate('日本語のテキスト', 7, stringWidth)).toBe('日本語…');
    expect(truncate('Re\u0301sume\u0301 de\u0301taille\u0301', 8, stringWidth)).toBe('Re\u0301sume\u0301 …');
    expect(truncate('👨‍👩‍👧 family', 3, stringWidth)).toBe('👨‍👩‍👧…');
    expect(truncate('short', 10, stringWidth)).toBe('short');
    expect(truncate('\u001b[33mwaiting_on_client\u001b[39m', 8, stringWidth)).toBe('waiting…');
  });

  const longRows = [
    ['1001', 'Scan of the 2024 W-2 from the main employer, all pages', '2024', 'A long description of what the client sent, with every detail we were told'],
    ['1002', '源泉徴収票_2024年分_株式会社サンプル商事_最終版.pdf', '2024', 'short'],
  ];
  const head = ['ID', freeText('Filename'), 'Tax year', freeText('Description')];

  it('fits a terminal: the widest free-text column gives way first, nothing else is cut', async () => {
    const text = await renderTable(head, longRows, { tty: true, colors: palette(false), columns: 80 });
    const lines = text.trimEnd().split('\n');
    expect(lines.map((line) => stringWidth(line)).every((width) => width <= 80)).toBe(true);
    expect(lines[1]).toMatch(/^1001 {2}Scan of the .*… {2}2024 +A long description .*…$/);
    expect(lines[2]).toMatch(/^1002 {2}源泉徴収票.*… +2024 +short$/);
    // Both free-text columns end up alike: the wider was cut down to the other first.
    expect(fitWidths([4, 54, 8, 75], [4, 12, 8, 12], 80 - 6)).toEqual([4, 31, 8, 31]);
  });

  // Issue 21, case 5: an enumerated value is never cut; the column is left out, with the note.
  it('shortens dates, then leaves a label out whole, and never cuts a status', async () => {
    const rows = [['quarterly_estimate', '\u001b[33mwaiting_on_client\u001b[39m', '2026-12-07 16:43 UTC (in 14 days)']];
    const head = [label('Type'), 'Status', dateColumn('Due')];
    const at = async (columns: number) => (await renderTable(head, rows, { tty: true, colors: palette(false), columns })).split('\n')[1];
    expect(await at(65)).toBe('quarterly_estimate  \u001b[33mwaiting_on_client\u001b[39m  2026-12-07 (in 14 days)');
    expect(await at(50)).toBe('quarterly_estimate  \u001b[33mwaiting_on_client\u001b[39m  2026-12-07');
    expect(await at(45)).toBe('\u001b[33mwaiting_on_client\u001b[39m  2026-12-07 (in 14 days)');
    expect(await renderTable(head, rows, { tty: true, colors: palette(false), columns: 45 })).toContain('(TYPE not shown at 45 columns;');
  });

  it('cuts nothing when the terminal is wide enough', async () => {
    const text = await renderTable(head, longRows, { tty: true, colors: palette(false), columns: 160 });
    expect(text).toContain(longRows[0]![3]);
    expect(text).not.toContain('…');
  });

  it('stops at the minimums it is given (free text first, then every column down to its title)', () => {
    expect(fitWidths([30, 40, 30], [30, 12, 30], 40)).toEqual([30, 12, 30]);
    expect(fitWidths([30, 12, 30], [5, 5, 5], 40)).toEqual([14, 12, 14]);
  });

  it('aligns card labels, indents multi-line values and leaves out absent rows', () => {
    const text = renderCard(
      [
        { title: 'Account 1001', rows: [['Name', 'Jane Doe'], ['Spouse', undefined], ['Summary', 'line one\nline two']] },
        { title: 'Spouse user 7', rows: [['Email', 'john@example.com']] },
      ],
      palette(false),
    );
    expect(text).toBe(
      'Account 1001\nName:     Jane Doe\nSummary:  line one\n          line two\n\nSpouse user 7\nEmail:    john@example.com\n',
    );
  });
});

describe('list modes', () => {
  it('prefers --ndjson over the global --json', () => {
    expect(listMode(true, true)).toBe('ndjson');
    expect(listMode(true, false)).toBe('json');
    expect(listMode(false, false)).toBe('table');
  });
});

describe('service text in structures and JSON', () => {
  it('sanitizeDeep cleans every string and key of an error\'s details, into objects without a prototype', () => {
    const clean = sanitizeDeep({ 'a\u001b[2Jb': ['x\u202ey', 1], nested: { hint: 'ok\u0007' } }) as Record<string, unknown>;
    expect(JSON.parse(JSON.stringify(clean))).toEqual({ ab: ['xy', 1], nested: { hint: 'ok' } });
    expect(Object.getPrototypeOf(clean)).toBeNull();
  });

  it('JSON for a terminal writes bidi controls, C1 controls and line separators as escapes: the same data', () => {
    const document = { title: 'Plan \u202etxt.exe \u2066x\u2069 \u0085 \u2028' };
    const text = formatJson(document, false);
    expect(text).toBe('{"title":"Plan \\u202etxt.exe \\u2066x\\u2069 \\u0085 \\u2028"}\n');
    expect(JSON.parse(text)).toEqual(document);
    expect(escapeJsonForTerminal('"plain"')).toBe('"plain"');
    expect(formatNdjsonLine({ a: '\u202e' })).toBe('{"a":"\\u202e"}\n');
  });

  it('an object where text was expected prints as its JSON, not [object Object]', () => {
    expect(sanitizeLine({ a: 1 })).toBe('{"a":1}');
  });
});
