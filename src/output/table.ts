import type { Palette } from './colors';

export interface TableLayout {
  /** A terminal: an aligned table with a header. Otherwise tab-separated rows without a header. */
  tty: boolean;
  colors: Palette;
}

/**
 * Rows of already formatted cells. On a terminal a borderless cli-table3 table (imported only here,
 * so commands that print no table never load it); off a terminal one tab-separated line per row
 * and no header, stable for `cut` and `awk` (the GitHub CLI's convention). Cells are sanitised by
 * the formatter, so they hold no tabs or line breaks.
 */
export async function renderTable(head: string[], rows: string[][], layout: TableLayout): Promise<string> {
  if (!layout.tty) return rows.map((row) => `${row.join('\t')}\n`).join('');
  const { default: Table } = await import('cli-table3');
  const table = new Table({
    head: head.map((title) => layout.colors.bold(title.toUpperCase())),
    chars: {
      top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
      bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
      left: '', 'left-mid': '', mid: '', 'mid-mid': '',
      right: '', 'right-mid': '', middle: '  ',
    },
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  table.push(...rows);
  return `${table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')}\n`;
}

/** Shortens text for a table cell on a terminal: `A very long descri…`. */
export function truncate(text: string, maxWidth: number): string {
  const characters = [...text];
  return characters.length <= maxWidth ? text : `${characters.slice(0, Math.max(1, maxWidth - 1)).join('')}…`;
}
