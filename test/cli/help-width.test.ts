import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { manPages } from '../../src/commands/man';
import { walk } from '../../src/commands/spec';
import { program } from '../../src/commands/tree';
import { HELP_TOPIC_NAMES } from '../../src/help/register';
import { runCli } from '../helpers/cli';
import { pipedOutput } from '../helpers/commandLines';

/**
 * Help, topics and man pages read as whole sentences within 80 columns (issue 25): prose is
 * wrapped at word boundaries, filled to the line (never hard-broken mid-sentence), and no line is
 * exempt: an example's command line too long for the width continues on the next (` \`).
 */


/**
 * The lines of each paragraph (lines of text between blank lines, none indented) are filled: a
 * line ends only where its paragraph's next word would not fit. A hard break mid-sentence fails.
 */
function unfilledBreaks(text: string, width: number): string[] {
  const lines = text.split('\n');
  const breaks: string[] = [];
  for (let index = 0; index + 1 < lines.length; index += 1) {
    const [line, next] = [lines[index]!, lines[index + 1]!];
    if (line === '' || next === '' || /^\s/.test(line) || /^\s/.test(next) || /^[A-Z ]+(\(.*\))?$/.test(line)) continue;
    const nextWord = next.split(' ')[0]!;
    if (line.length + 1 + nextWord.length <= width) breaks.push(`${line}⏎${next}`);
  }
  return breaks;
}

describe('help reflows to 80 columns in a pipe', () => {
  it('`taxprep watch --help | cat`: every line fits, and the notes are whole paragraphs', async () => {
    const { exitCode, stdout } = await runCli(['watch', '--help']);
    expect(exitCode).toBe(0);
    for (const line of stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(unfilledBreaks(stdout, 80)).toEqual([]);
    // The two breaks the issue quotes are gone: the sentences continue on the same line.
    expect(stdout).not.toMatch(/"deliverable_id"\n\(deliverables\)/);
    expect(stdout).not.toMatch(/A damaged state\nfile is refused/);
    expect(stdout).toMatch(/^ {2}deliverable\.appeared, deliverable\.status$/m);
    expect(stdout).toMatch(/^ {2}# from cron: mail only when something changed\n {2}\$ taxprep watch --once$/m);
  });

  it.each(HELP_TOPIC_NAMES.map((topic) => [topic]))('`taxprep help %s`: every line fits, paragraphs filled', async (topic) => {
    const text = await pipedOutput(['help', topic]);
    expect(text.trim().length).toBeGreaterThan(0);
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(unfilledBreaks(text, 80)).toEqual([]);
  });

  it.each(walk(program).map(({ path }) => [path.join(' ')]))('`taxprep %s --help`: every line fits 80 columns, examples too, and notes are filled', async (path) => {
    const text = await pipedOutput([...path.split(' ').filter((word) => word !== ''), '--help']);
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(unfilledBreaks(text, 80)).toEqual([]);
  });

  it('inherited flags are one line pointing at `taxprep help flags`, which lists every one', async () => {
    const upload = await pipedOutput(['docs', 'upload', '--help']);
    expect(upload).toMatch(/\nINHERITED FLAGS\n {2}--help, --json, --jq, --profile and \d+ more: see `taxprep help flags`\n\n/);
    // 53 lines when the program's flags were listed in every command's help.
    expect(upload.split('\n').length).toBeLessThan(53 - 10);
    const flags = await pipedOutput(['help', 'flags']);
    for (const flag of program.flags ?? []) expect(flags).toContain(flag.flag);
    expect(flags).toMatch(/^ {2}-h, --help +show help for a command$/m);
  });
});

// `man` (man-db with groff) is what renders pages for a user; CI installs it (.ci/run).
const noMan = spawnSync('man', ['--version']).error !== undefined;

describe('man pages read within 80 columns', () => {
  const pages = manPages(program, '0.0.0');

  it.skipIf(noMan)('every page, rendered by man at 80 columns: every line fits, examples and lists included', () => {
    const directory = mkdtempSync(join(tmpdir(), 'taxprep-man-'));
    for (const { file, text } of pages) {
      writeFileSync(join(directory, file), text);
      const rendered = spawnSync('man', ['-l', join(directory, file)], { env: { ...process.env, MANWIDTH: '80', MAN_KEEP_FORMATTING: '', MANPAGER: 'cat', PAGER: 'cat' }, encoding: 'utf8' });
      expect(rendered.status, file).toBe(0);
      const plain = spawnSync('col', ['-bx'], { input: rendered.stdout, encoding: 'utf8' }).stdout;
      for (const line of plain.split('\n')) expect(line.length, `${file}: ${line}`).toBeLessThanOrEqual(80);
    }
  });

  it('NOTES are filled paragraphs (.PP), not preformatted lines', () => {
    const watch = pages.find((page) => page.file === 'taxprep-watch.1')!.text;
    const notes = watch.slice(watch.indexOf('.SH NOTES'), watch.indexOf('.SH SEE ALSO'));
    // The sentences the issue saw broken are on one line of one paragraph, which man fills.
    expect(notes).toMatch(/^\.PP\n[^\n]*Stop with Ctrl\\-C \(exit 130\)[^\n]* A damaged state file is refused \(exit 2\)[^\n]*$/m);
    expect(notes).toMatch(/\.nf\ndeliverable\.appeared, deliverable\.status\n/);
  });
});
