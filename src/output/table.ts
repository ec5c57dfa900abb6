import type { Palette } from './colors';
import { shorterTimestamps } from './dates';
import { shorterProgress } from './progress';
import { wrapText } from './wrap';

/**
 * How a column gives way on a narrow terminal. A plain title (`'ID'`) is a column that is never
 * cut: ids, statuses, numbers, percentages, and what another command adds unless it says otherwise.
 */
export interface ColumnSpec {
  title: string;
  /**
   * `text`: free text, cut at its end (`A very long descri…`). `filename`: cut in the middle, so that
   * both ends stay (`1099…2024.pdf`): names often differ only at one end. `wrap`: free text a person
   * needs whole (an outstanding item), wrapped onto more lines of its row instead of cut. `label`: a
   * value from a list (a type, a purpose, a status), never cut: a column that cannot fit is left
   * out, with the note, after the columns marked `drop`. Absent: never cut.
   */
  cut?: 'text' | 'filename' | 'wrap' | 'label';
  /** Shorter forms of a cell, longest first: a date without its time, a progress without its bar. */
  shorter?: (cell: string) => string[];
  /** The width free text or a label is not cut below (or its title, if wider). */
  min?: number;
  /**
   * Left out when the table cannot fit otherwise, lowest first; said under the table. Only for
   * columns the rest of the row can be read without (`--json` has every field).
   */
  drop?: number;
}

export type Column = string | ColumnSpec;

/** Free text (names, titles, descriptions): the first columns cut, after dates. */
export function freeText(title: string, options: Pick<ColumnSpec, 'min' | 'drop'> = {}): ColumnSpec {
  return { title, cut: 'text', ...options };
}

/** Free text a person needs whole: wrapped onto more lines of its row, never cut. */
export function wrapped(title: string, options: Pick<ColumnSpec, 'min' | 'drop'> = {}): ColumnSpec {
  return { title, cut: 'wrap', ...options };
}

/** A file name: cut in the middle, keeping both ends. */
export function fileName(title: string, options: Pick<ColumnSpec, 'min' | 'drop'> = {}): ColumnSpec {
  return { title, cut: 'filename', ...options };
}

/** A value from a list (type, purpose, status): never cut; left out (with the note) when the table cannot fit. */
export function label(title: string, options: Pick<ColumnSpec, 'drop'> = {}): ColumnSpec {
  return { title, cut: 'label', ...options };
}

/** Timestamps: `2026-11-23 10:15 UTC (in 6 days)`, then `2026-11-23 (in 6 days)`, then `2026-11-23`. */
export function dateColumn(title: string, options: Pick<ColumnSpec, 'drop'> = {}): ColumnSpec {
  return { title, shorter: shorterTimestamps, ...options };
}

/** Progress: the bar and the percentage, then the percentage alone. */
export function progressColumn(title: string): ColumnSpec {
  return { title, shorter: shorterProgress };
}

export interface TableLayout {
  /** A terminal: an aligned table with a header. Otherwise tab-separated rows without a header. */
  tty: boolean;
  colors: Palette;
  /** The terminal's width: the table is fitted to it. */
  columns: number;
}

/** Spaces between columns. */
const GAP = 2;
/** Free text and labels are not cut below this (or their title, if wider): a few words stay readable. */
const MIN_CUT_WIDTH = 12;
const ELLIPSIS = '…';
/** Colour and style escapes, the only ones a sanitised cell can hold. */
const SGR = /\u001b\[[0-9;]*m/g;

type Width = (text: string) => number;

interface Fitted {
  shown: number[];
  /** Per shown column: which of its forms (0: the cell as formatted). */
  levels: number[];
  widths: number[];
  fits: boolean;
}

/**
 * Rows of already formatted cells. On a terminal an aligned, borderless table fitted to the
 * terminal's width by what each column means: first dates (and progress bars) take their shorter
 * forms, then free text is cut (or wrapped) down to a readable minimum; if that is not enough,
 * columns marked `drop` are left out, then labels (and named under the table). Ids, statuses,
 * labels, numbers and percentages are never cut. Widths are display widths (East Asian wide characters count two
 * columns, combining marks none, emoji clusters two) and text is cut between grapheme clusters.
 * Off a terminal one tab-separated line per row, no header and nothing shortened, stable for `cut`
 * and `awk` (the GitHub CLI's convention). Cells are sanitised by the formatter, so they hold no
 * tabs or line breaks.
 */
export async function renderTable(head: Column[], rows: string[][], layout: TableLayout): Promise<string> {
  if (!layout.tty) return rows.map((row) => `${row.join('\t')}\n`).join('');
  // Loaded only when a table is drawn on a terminal.
  const { default: stringWidth } = await import('string-width');
  const columns = head.map((column) => (typeof column === 'string' ? { title: column } : column));
  const titles = columns.map((column) => column.title.toUpperCase());
  // forms[column][row][level]
  const forms = columns.map((column, index) =>
    rows.map((row) => {
      const cell = row[index] ?? '';
      return column.shorter === undefined ? [cell] : [cell, ...column.shorter(cell)];
    }),
  );
  const levelCount = forms.map((cells) => Math.max(1, ...cells.map((cellForms) => cellForms.length)));
  const formAt = (column: number, row: number, level: number) => {
    const cellForms = forms[column]![row]!;
    return cellForms[Math.min(level, cellForms.length - 1)]!;
  };
  const levelWidths = columns.map((_, column) =>
    Array.from({ length: levelCount[column]! }, (__, level) =>
      Math.max(stringWidth(titles[column]!), ...rows.map((___, row) => stringWidth(formAt(column, row, level)))),
    ),
  );
  // Labels are never cut: one without a `drop` of its own may still be left out, after the others.
  const dropOrder = columns
    .map((column, index) => ({ drop: column.drop ?? (column.cut === 'label' ? Number.MAX_SAFE_INTEGER : undefined), index }))
    .filter((entry): entry is { drop: number; index: number } => entry.drop !== undefined)
    .sort((a, b) => a.drop - b.drop || b.index - a.index)
    .map((entry) => entry.index);

  // Each way of giving way is tried with no column left out, then one more at a time: a column is
  // left out before a label is cut, and before free text goes below its own minimum.
  let fitted: Fitted | undefined;
  for (let stage = 0; stage < STAGES && !fitted?.fits; stage += 1) {
    for (let dropped = 0; dropped <= dropOrder.length && !fitted?.fits; dropped += 1) {
      const left = new Set(dropOrder.slice(0, dropped));
      const shown = columns.map((_, index) => index).filter((index) => !left.has(index));
      fitted = fitColumns(shown, columns, levelWidths, titles.map((title) => stringWidth(title)), layout.columns, stage);
    }
  }
  const { shown, levels, widths } = fitted!;

  const pad = (text: string, at: number) => text + ' '.repeat(Math.max(0, widths[at]! - stringWidth(text)));
  const line = (cells: string[]) => cells.join(' '.repeat(GAP)).trimEnd();
  const header = line(shown.map((column, at) => pad(layout.colors.bold(titles[column]!), at)));
  const body = rows.flatMap((_, row) => {
    // Each cell as the lines it takes: one, or more for a wrapped column.
    const cellLines = shown.map((column, at) => {
      const cell = formAt(column, row, levels[at]!);
      if (columns[column]!.cut === 'wrap') return wrapCell(cell, widths[at]!, stringWidth);
      return [(columns[column]!.cut === 'filename' ? truncateMiddle : truncate)(cell, widths[at]!, stringWidth)];
    });
    const height = Math.max(...cellLines.map((lines) => lines.length));
    return Array.from({ length: height }, (__, index) => line(cellLines.map((lines, at) => pad(lines[index] ?? '', at))));
  });
  const left = titles.filter((_, index) => !shown.includes(index));
  const footer = left.length === 0 ? [] : [layout.colors.dim(wrapText(`(${left.join(', ')} not shown at ${layout.columns} columns; --json has every field)`, layout.columns))];
  return `${[header, ...body, ...footer].join('\n')}\n`;
}

/** Widths for the `shown` columns within `width`, giving way in the order `renderTable` describes. */
/** 0: dates, then free text down to its minimum; 1: free text below its own minimum. Labels are never cut. */
const STAGES = 2;

function fitColumns(shown: number[], columns: ColumnSpec[], levelWidths: number[][], titleWidths: number[], width: number, stage: number): Fitted {
  const available = width - GAP * (shown.length - 1);
  const levels = shown.map(() => 0);
  let widths = shown.map((column) => levelWidths[column]![0]!);
  const total = () => widths.reduce((sum, each) => sum + each, 0);
  // Shorter forms first, the widest column a step at a time.
  while (total() > available) {
    const candidates = shown.map((column, at) => ({ at, column })).filter(({ column, at }) => levels[at]! < levelWidths[column]!.length - 1);
    if (candidates.length === 0) break;
    candidates.sort((a, b) => widths[b.at]! - widths[a.at]!);
    const { at, column } = candidates[0]!;
    levels[at] = levels[at]! + 1;
    widths[at] = levelWidths[column]![levels[at]!]!;
  }
  const minimum = (column: number, at: number, cuts: boolean, ownMinimum: boolean) => {
    const spec = columns[column]!;
    if (!cuts) return widths[at]!;
    return Math.min(widths[at]!, Math.max(ownMinimum ? (spec.min ?? MIN_CUT_WIDTH) : MIN_CUT_WIDTH, titleWidths[column]!));
  };
  const isText = (column: number) => columns[column]!.cut === 'text' || columns[column]!.cut === 'filename' || columns[column]!.cut === 'wrap';
  const phases: Array<(column: number) => [cuts: boolean, ownMinimum: boolean]> = [
    // Free text of a column that may be left out (the least needed) first, then all free text.
    (column) => [isText(column) && columns[column]!.drop !== undefined, true],
    (column) => [isText(column), true],
  ];
  if (stage >= 1) phases.push((column) => [isText(column), false]);
  for (const phase of phases) {
    widths = fitWidths(widths, shown.map((column, at) => minimum(column, at, ...phase(column))), available);
  }
  return { shown, levels, widths, fits: total() <= available };
}

/**
 * Column widths within `available`: the widest column that may still shrink gives way first, down
 * to the next widest or its minimum, until the table fits or nothing may shrink further.
 */
export function fitWidths(natural: number[], minimums: number[], available: number): number[] {
  const widths = [...natural];
  let excess = widths.reduce((sum, width) => sum + width, 0) - available;
  while (excess > 0) {
    const shrinkable = widths.map((width, index) => ({ width, index })).filter(({ width, index }) => width > minimums[index]!);
    if (shrinkable.length === 0) break;
    shrinkable.sort((a, b) => b.width - a.width);
    const widest = shrinkable[0]!;
    const nextWidest = shrinkable[1]?.width ?? 0;
    const target = Math.max(minimums[widest.index]!, widest.width - excess, Math.min(nextWidest, widest.width - 1));
    excess -= widest.width - target;
    widths[widest.index] = target;
  }
  return widths;
}

/** The grapheme clusters of `text` without colour, with their widths. */
function clusters(text: string, width: Width): Array<{ segment: string; width: number }> {
  return [...new Intl.Segmenter().segment(text.replace(SGR, ''))].map(({ segment }) => ({ segment, width: width(segment) }));
}

/** The leading clusters that fit in `maxWidth`. */
function takeWidth(parts: Array<{ segment: string; width: number }>, maxWidth: number): string {
  let kept = '';
  let keptWidth = 0;
  for (const part of parts) {
    if (keptWidth + part.width > maxWidth) break;
    kept += part.segment;
    keptWidth += part.width;
  }
  return kept;
}

/**
 * A cell wrapped to `maxWidth` columns at word boundaries (./wrap.ts), a word longer than the
 * column broken between grapheme clusters: every character stays.
 */
function wrapCell(text: string, maxWidth: number, width: Width): string[] {
  if (width(text) <= maxWidth) return [text];
  return wrapText(text.replace(SGR, ''), maxWidth)
    .split('\n')
    .flatMap((piece) => {
      const lines: string[] = [];
      let rest = clusters(piece.trim(), width);
      while (rest.length > 0) {
        const taken = takeWidth(rest, maxWidth) || rest[0]!.segment;
        lines.push(taken);
        rest = rest.slice([...new Intl.Segmenter().segment(taken)].length);
      }
      return lines;
    });
}

/**
 * Shortens text to `maxWidth` display columns, cut between grapheme clusters: `A very long descri…`.
 * A shortened cell loses its colour: cutting through an escape sequence would garble the row.
 */
export function truncate(text: string, maxWidth: number, width: Width): string {
  if (width(text) <= maxWidth) return text;
  return `${takeWidth(clusters(text, width), maxWidth - 1)}${ELLIPSIS}`;
}

/**
 * Shortens text in its middle, keeping both ends (`1099…2024.pdf`): more of the end, which holds
 * the year and the extension of a file name.
 */
export function truncateMiddle(text: string, maxWidth: number, width: Width): string {
  if (width(text) <= maxWidth) return text;
  const parts = clusters(text, width);
  const room = Math.max(0, maxWidth - 1);
  let tail = '';
  let tailWidth = 0;
  for (let index = parts.length - 1; index >= 0 && tailWidth + parts[index]!.width <= Math.ceil(room * 0.7); index -= 1) {
    tail = parts[index]!.segment + tail;
    tailWidth += parts[index]!.width;
  }
  return `${takeWidth(parts, room - tailWidth)}${ELLIPSIS}${tail}`;
}
