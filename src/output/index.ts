import type { Context } from '../types';
import { renderCard, type CardSection } from './card';
import { palette } from './colors';
import { createFormat, type Format } from './format';
import { JsonListWriter, formatJson, formatNdjsonLine, pickFields, pickItemFields, type ListWriter } from './json';
import { renderTable, type Column } from './table';
import { writeText } from './write';
import { wrapMessage, wrapText } from './wrap';

export type { CardSection } from './card';
export type { Format } from './format';
export { wrapLastCell, wrapMessage, wrapText } from './wrap';
export { dateColumn, fileName, freeText, label, progressColumn, wrapped, type Column } from './table';

/**
 * Everything a command prints goes through here: data to stdout (JSON as the service sent it,
 * tables, cards), messages to stderr. Decisions about terminals, colour and dates live here once.
 */
export interface Output {
  /** Whether the reader of stdout is a person at a terminal (tables, readable dates). */
  readonly forPeople: boolean;
  /** The width stdout's lines are fitted to when `forPeople`. */
  readonly columns: number;
  readonly format: Format;
  /**
   * The document; with `--json FIELDS` only those fields of it, or of each item of its `listKey`
   * array when it is a list.
   */
  json(document: unknown, listKey?: string): Promise<void>;
  jsonList(key: string): ListWriter;
  ndjson(item: unknown): Promise<void>;
  /** `title` is shown above the table on a terminal (a table that follows a card). */
  table(head: Column[], rows: string[][], title?: string): Promise<void>;
  card(sections: CardSection[]): Promise<void>;
  /** A message for the person (stderr): never mixed with data. */
  note(message: string): Promise<void>;
}

export function createOutput(ctx: Pick<Context, 'io' | 'clock'> & Partial<Pick<Context, 'globals'>>): Output {
  const { io } = ctx;
  const fields = ctx.globals?.jsonFields;
  const expression = ctx.globals?.jq;
  /** A document as printed: as JSON, or what `--jq` makes of it. */
  const document = async (value: unknown, pretty: boolean) =>
    expression === undefined ? formatJson(value, pretty) : (await import('./jq')).applyJq(value, expression, pretty);
  const colors = palette(io.stdoutColor);
  const output: Output = {
    forPeople: io.stdoutIsTTY,
    columns: io.columns,
    format: createFormat({ readable: io.stdoutIsTTY, colors, now: ctx.clock.now() }),
    json: async (value, listKey) =>
      writeText(io.stdout, await document(listKey === undefined ? pickFields(value, fields) : pickItemFields(value, listKey, fields), io.stdoutIsTTY)),
    // jq needs the whole document: with --jq, the pages are gathered first.
    jsonList: (key) => (expression === undefined ? new JsonListWriter(io.stdout, key, io.stdoutIsTTY, fields) : gatheredList(key, (value) => output.json(value, key))),
    ndjson: async (item) => writeText(io.stdout, expression === undefined ? formatNdjsonLine(pickFields(item, fields)) : await document(pickFields(item, fields), false)),
    table: async (head, rows, title) => {
      const heading = title !== undefined && io.stdoutIsTTY ? `\n${colors.bold(title)}\n` : '';
      await writeText(io.stdout, heading + (await renderTable(head, rows, { tty: io.stdoutIsTTY, colors, columns: io.columns })));
    },
    card: (sections) => {
      const card = renderCard(sections, colors);
      return writeText(io.stdout, io.stdoutIsTTY ? wrapText(card, io.columns) : card);
    },
    // A message for the person is not the command's output: a stderr that cannot be written
    // (2>/dev/full) loses it, and the command goes on; stdout's failures end the run (src/cli.ts).
    note: (message) => writeText(io.stderr, `${wrapMessage(io, message)}\n`).catch(() => undefined),
  };
  return output;
}

/** A list gathered item by item and printed whole at its end (`{key: [...], ...fields}`). */
function gatheredList(key: string, print: (document: unknown) => Promise<void>): ListWriter {
  const items: unknown[] = [];
  return {
    add: async (item) => void items.push(item),
    end: (fields) => print({ [key]: items, ...fields }),
  };
}
