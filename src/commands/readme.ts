import { walk, type CommandSpec } from './spec';

export const TABLE_START = '<!-- commands:start (generated from src/commands by `npm run completions`; do not edit) -->';
export const TABLE_END = '<!-- commands:end -->';

/** The README's command table: every command that runs, with its arguments and description. */
export function commandTable(root: CommandSpec): string {
  const rows = walk(root)
    .filter(({ path, spec }) => path.length > 0 && spec.load !== undefined)
    .map(({ path, spec }) => {
      const usage = [root.name, ...path, ...(spec.arguments ?? []).map((argument) => argument.name)].join(' ');
      return `| \`${usage}\` | ${spec.description.replace(/\|/g, '\\|')} |`;
    });
  return [TABLE_START, '', '| Command | What it does |', '|---|---|', ...rows, '', TABLE_END].join('\n');
}

/** `readme` with its command table replaced by `table`. */
export function withCommandTable(readme: string, table: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start === -1 || end < start) throw new Error(`the README has no ${TABLE_START} ... ${TABLE_END} block`);
  return readme.slice(0, start) + table + readme.slice(end + TABLE_END.length);
}
