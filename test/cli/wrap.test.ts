import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli';
import { EXIT } from '../../src/errors';
import { createIO } from '../../src/io';
import { createOutput } from '../../src/output';
import { wrapMessage, wrapText } from '../../src/output/wrap';

describe('wrapping text at word boundaries', () => {
  it('breaks between words, never inside a word, a code or an identifier', () => {
    const text = 'error: the key lacks a permission this call needs (INSUFFICIENT_PERMISSIONS); ask for an account key';
    const lines = wrapText(text, 40).split('\n');
    expect(lines).toEqual(['error: the key lacks a permission this', 'call needs (INSUFFICIENT_PERMISSIONS);', 'ask for an account key']);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(40);
  });

  it('gives a word longer than the line a line of its own, and keeps a URL beside its label', () => {
    expect(wrapText('see https://example.com/a/very/long/path/that/does/not/fit for more', 20)).toBe(
      'see\nhttps://example.com/a/very/long/path/that/does/not/fit\nfor more',
    );
    expect(wrapText('Link:    https://example.com/a/very/long/path', 20)).toBe('Link:    https://example.com/a/very/long/path');
  });

  it('continues an aligned line under its text, and keeps line breaks and alignment', () => {
    expect(wrapText('  --json [fields]  print the document on stdout, only FIELDS when given', 44)).toBe(
      `  --json [fields]  print the document on\n${' '.repeat(19)}stdout, only FIELDS when\n${' '.repeat(19)}given`,
    );
    expect(wrapText('short\n  a  b', 10)).toBe('short\n  a  b');
  });

  it('wraps messages on a terminal only: a line in a log is one record', () => {
    const text = 'warning: one two three four five six';
    expect(wrapMessage({ stderrIsTTY: true, columns: 20 }, text)).toBe('warning: one two\nthree four five six');
    expect(wrapMessage({ stderrIsTTY: false, columns: 20 }, text)).toBe(text);
  });
});

describe('wrapped where a person reads', () => {
  class Terminal extends Writable {
    text = '';
    readonly isTTY = true;
    constructor(readonly columns: number) {
      super();
    }
    override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void) {
      this.text += chunk.toString('utf8');
      callback();
    }
  }

  it('an error on a terminal wraps between words; in a pipe it stays one line', async () => {
    const stderr = new Terminal(40);
    const code = await main(['projects', 'list', '1001', '--status', 'bogus'], { env: {}, io: { stdout: new Terminal(40), stderr } });
    expect(code).toBe(EXIT.USAGE);
    const lines = stderr.text.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(40);
    expect(stderr.text.replace(/\s+/g, ' ')).toContain('waiting_on_client, in_progress, in_review, completed');
  });

  it('a card on a terminal continues a long value under the values, and keeps a URL whole', () => {
    const stdout = new Terminal(40);
    const out = createOutput({ io: { ...createIO({ env: { NO_COLOR: '1' }, color: true, stdout, stderr: new Terminal(40) }) }, clock: { now: () => new Date(), sleep: async () => undefined } });
    return out
      .card([{ rows: [['Summary', 'Draft of the third-quarter estimate: federal and state payments'], ['Link', 'https://app.example/deliverables/9001/view?token=abc']] }])
      .then(() => {
        expect(stdout.text).toBe(
          'Summary:  Draft of the third-quarter\n          estimate: federal and state\n          payments\nLink:     https://app.example/deliverables/9001/view?token=abc\n',
        );
      });
  });
});
