import type { Palette } from './colors';

export interface CardSection {
  title?: string;
  /** Label and formatted value; rows whose value is undefined are left out. */
  rows: Array<[label: string, value: string | undefined]>;
}

/**
 * A key/value card: aligned labels, values that span lines indented under the first, sections
 * separated by a blank line. The same layout on and off a terminal (values differ: dates, colour).
 */
export function renderCard(sections: CardSection[], colors: Palette): string {
  const shown = sections.map((section) => ({
    title: section.title,
    rows: section.rows.filter((row): row is [string, string] => row[1] !== undefined),
  }));
  const labelWidth = Math.max(0, ...shown.flatMap((section) => section.rows.map(([label]) => label.length))) + 3;
  return shown
    .filter((section) => section.rows.length > 0)
    .map((section) => {
      const lines = section.title === undefined ? [] : [colors.bold(section.title)];
      for (const [label, value] of section.rows) {
        const indented = value.replace(/\n/g, `\n${' '.repeat(labelWidth)}`);
        lines.push(`${colors.dim(`${label}:`.padEnd(labelWidth))}${indented}`);
      }
      return `${lines.join('\n')}\n`;
    })
    .join('\n');
}
