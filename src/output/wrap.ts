import type { IO } from '../types';

/** Colour and style escapes: they take no room on the screen. */
const SGR = /\u001b\[[0-9;]*m/g;

/** Columns a line takes: its characters, escapes left out (messages and help are mostly ASCII). */
function columnsOf(text: string): number {
  return [...text.replace(SGR, '')].length;
}

/**
 * Where the continuation of a line starts: under its text after an aligned gap of two or more
 * spaces (`  --json [fields]   print ...`, `Link:    http://...`), else under its first word.
 */
function continuationIndent(line: string, width: number): string {
  const aligned = /^(\s*\S.*?\s{2,})\S/.exec(line);
  if (aligned !== null && columnsOf(aligned[1]!) <= width / 2) return ' '.repeat(columnsOf(aligned[1]!));
  return /^\s*/.exec(line)![0];
}

/**
 * Text wrapped at word boundaries to `width` columns, for help, errors, hints and cards on a
 * terminal. A word is never broken, nor a code, an identifier or a URL (anything without a
 * space): one longer than the line gets a line of its own. Line breaks in the text are kept;
 * each wrapped line continues under its own text (see `continuationIndent`). Spaces inside a line
 * are kept as they are, so aligned columns stay aligned.
 */
export function wrapText(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => wrapLine(line, width))
    .join('\n');
}

/**
 * A line of cells wrapped at word boundaries, its last cell (free text: a reason, an error)
 * continuing under itself; `lead` is the cells before it with their gaps. When that would leave
 * the text less than half the line, it continues as `wrapText`'s lines do.
 */
export function wrapLastCell(lead: string, last: string, width: number): string {
  const under = columnsOf(lead);
  return wrapLine(lead + last, width, under <= width / 2 ? ' '.repeat(under) : undefined);
}

function wrapLine(line: string, width: number, continuation?: string): string {
  if (columnsOf(line) <= width) return line;
  const indent = continuation ?? continuationIndent(line, width);
  const lines: string[] = [];
  let current = '';
  // Each word with the spaces after it; the line's own leading spaces stay with the first.
  for (const word of line.match(/^\s*\S+\s*|\S+\s*/g) ?? []) {
    const candidate = current + word;
    // Never a break right after a label or the indent: a long URL stays beside its label.
    if (columnsOf(current) > indent.length && columnsOf(candidate.trimEnd()) > width) {
      lines.push(current.trimEnd());
      current = indent + word;
    } else {
      current = candidate;
    }
  }
  lines.push(current.trimEnd());
  return lines.join('\n');
}

/**
 * A message for stderr (an error, a hint, a note) as it should be written: wrapped to the
 * terminal's width when stderr is a terminal, unchanged in a pipe or a log, where a line is a
 * record and the reader's pager does the wrapping.
 */
export function wrapMessage(io: Pick<IO, 'stderrIsTTY' | 'columns'>, text: string): string {
  return io.stderrIsTTY ? wrapText(text, io.columns) : text;
}
