import type { Context } from '../context';
import { renderCard, type CardSection } from './card';
import { palette } from './colors';
import { createFormat, type Format } from './format';
import { JsonListWriter, formatJson, formatNdjsonLine, pickFields, pickItemFields } from './json';
import { renderTable } from './table';
import { writeText } from './write';

export type { CardSection } from './card';
export type { Format } from './format';

/**
 * Everything a command prints goes through here: data to stdout (JSON as the service sent it,
 * tables, cards), messages to stderr. Decisions about terminals, colour and dates live here once.
 */
export interface Output {
  /** Whether the reader of stdout is a person at a terminal (tables, readable dates). */
  readonly forPeople: boolean;
  readonly format: Format;
  /**
   * The document; with `--json FIELDS` only those fields of it, or of each item of its `listKey`
   * array when it is a list.
   */
  json(document: unknown, listKey?: string): Promise<void>;
  jsonList(key: string): JsonListWriter;
  ndjson(item: unknown): Promise<void>;
  /** `title` is shown above the table on a terminal (a table that follows a card). */
  table(head: string[], rows: string[][], title?: string): Promise<void>;
  card(sections: CardSection[]): Promise<void>;
  /** A message for the person (stderr): never mixed with data. */
  note(message: string): Promise<void>;
}

export function createOutput(ctx: Pick<Context, 'io' | 'clock'> & Partial<Pick<Context, 'globals'>>): Output {
  const { io } = ctx;
  const fields = ctx.globals?.jsonFields;
  const colors = palette(io.stdoutColor);
  return {
    forPeople: io.stdoutIsTTY,
    format: createFormat({ readable: io.stdoutIsTTY, colors, now: ctx.clock.now() }),
    json: (document, listKey) =>
      writeText(io.stdout, formatJson(listKey === undefined ? pickFields(document, fields) : pickItemFields(document, listKey, fields), io.stdoutIsTTY)),
    jsonList: (key) => new JsonListWriter(io.stdout, key, io.stdoutIsTTY, fields),
    ndjson: (item) => writeText(io.stdout, formatNdjsonLine(pickFields(item, fields))),
    table: async (head, rows, title) => {
      const heading = title !== undefined && io.stdoutIsTTY ? `\n${colors.bold(title)}\n` : '';
      await writeText(io.stdout, heading + (await renderTable(head, rows, { tty: io.stdoutIsTTY, colors })));
    },
    card: (sections) => writeText(io.stdout, renderCard(sections, colors)),
    note: (message) => writeText(io.stderr, `${message}\n`),
  };
}
