import type { Palette } from './colors';

/** Free text (names, titles, descriptions): on a narrow terminal, the columns that give way. */
export interface FreeTextColumn {
  title: string;
  freeText: true;
}

/** A column's title, or a free-text column. */
export type Column = string | FreeTextColumn;

export function freeText(title: string): FreeTextColumn {
  return { title, freeText: true };
}

export interface TableLayout {
  /** A terminal: an aligned table with a header. Otherwise tab-separated rows without a header. */
  tty: boolean;
  colors: Palette;
  /** The terminal's width: a table wider than this shortens its free-text columns. */
  columns: number;
}

/** Spaces between columns. */
const GAP = 2;
/** A free-text column is not shortened below this (or its title, if wider): a few words stay readable. */
const MIN_FREE_TEXT_WIDTH = 12;
const ELLIPSIS = '…';
/** Colour and style escapes, the only ones a sanitised cell can hold. */
const SGR = /\u001b\[[0-9;]*m/g;
const SGR_TEST = /\u001b\[[0-9;]*m/;

/**
 * Rows of already formatted cells. On a terminal an aligned, borderless table that fits the
 * terminal's width: while it is too wide, the widest free-text column is shortened, down to a
 * readable minimum; only when that is not enough are other columns shortened too, widest first,
 * down to their titles: plain values (types, dates) before coloured ones (statuses), so that no
 * row wraps. Widths are display widths
 * (East Asian wide characters count two columns, combining marks none, emoji clusters two) and text
 * is cut between grapheme clusters. Off a terminal one tab-separated line per row, no header and
 * nothing shortened, stable for `cut` and `awk` (the GitHub CLI's convention). Cells are sanitised
 * by the formatter, so they hold no tabs or line breaks. A coloured cell is shortened only on a
 * terminal too narrow for its column's title and the others' minimums.
 */
export async function renderTable(head: Column[], rows: string[][], layout: TableLayout): Promise<string> {
  if (!layout.tty) return rows.map((row) => `${row.join('\t')}\n`).join('');
  // Loaded only when a table is drawn on a terminal.
  const { default: stringWidth } = await import('string-width');
  const titles = head.map((column) => (typeof column === 'string' ? column : column.title).toUpperCase());
  const natural = titles.map((title, index) => Math.max(stringWidth(title), ...rows.map((row) => stringWidth(row[index] ?? ''))));
  const available = layout.columns - GAP * (head.length - 1);
  const titleWidths = titles.map((title) => stringWidth(title));
  const freeTextMinimums = head.map((column, index) =>
    typeof column === 'string' ? natural[index]! : Math.min(natural[index]!, Math.max(MIN_FREE_TEXT_WIDTH, titleWidths[index]!)),
  );
  // Free text gives way first, then columns of plain values (types, dates, sizes), and coloured
  // ones (statuses, whose colour is half their meaning) last, each down to its title.
  const coloured = head.map((_, index) => rows.some((row) => SGR_TEST.test(row[index] ?? '')));
  const plainMinimums = titleWidths.map((width, index) => (coloured[index] ? natural[index]! : width));
  const widths = [freeTextMinimums, plainMinimums, titleWidths].reduce((fitted, minimums) => fitWidths(fitted, minimums, available), natural);
  const pad = (text: string, index: number) => text + ' '.repeat(Math.max(0, widths[index]! - stringWidth(text)));
  const line = (cells: string[]) => cells.join(' '.repeat(GAP)).trimEnd();
  const header = line(titles.map((title, index) => pad(layout.colors.bold(title), index)));
  const body = rows.map((row) => line(row.map((cell, index) => pad(truncate(cell, widths[index]!, stringWidth), index))));
  return `${[header, ...body].join('\n')}\n`;
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

/**
 * Shortens text to `maxWidth` display columns, cut between grapheme clusters: `A very long descri…`.
 * A shortened cell loses its colour: cutting through an escape sequence would garble the row.
 */
export function truncate(text: string, maxWidth: number, width: (text: string) => number): string {
  if (width(text) <= maxWidth) return text;
  let kept = '';
  let keptWidth = 0;
  for (const { segment } of new Intl.Segmenter().segment(text.replace(SGR, ''))) {
    const segmentWidth = width(segment);
    if (keptWidth + segmentWidth > maxWidth - 1) break;
    kept += segment;
    keptWidth += segmentWidth;
  }
  return `${kept}${ELLIPSIS}`;
}
