import type { Context } from '../context';
import { renderCard, type CardSection } from './card';
import { palette } from './colors';
import { createFormat, type Format } from './format';
import { JsonListWriter, formatJson, formatNdjsonLine } from './json';
import { renderTable, type Column } from './table';
import { writeText } from './write';

export type { CardSection } from './card';
export type { Format } from './format';
export { freeText, type Column } from './table';

/**
 * Everything a command prints goes through here: data to stdout (JSON as the service sent it,
 * tables, cards), messages to stderr. Decisions about terminals, colour and dates live here once.
 */
export interface Output {
  /** Whether the reader of stdout is a person at a terminal (tables, readable dates). */
  readonly forPeople: boolean;
  readonly format: Format;
  json(document: unknown): Promise<void>;
  jsonList(key: string): JsonListWriter;
  ndjson(item: unknown): Promise<void>;
  /** `title` is shown above the table on a terminal (a table that follows a card). */
  table(head: Column[], rows: string[][], title?: string): Promise<void>;
  card(sections: CardSection[]): Promise<void>;
  /** A message for the person (stderr): never mixed with data. */
  note(message: string): Promise<void>;
}

export function createOutput(ctx: Pick<Context, 'io' | 'clock'>): Output {
  const { io } = ctx;
  const colors = palette(io.stdoutColor);
  return {
    forPeople: io.stdoutIsTTY,
    format: createFormat({ readable: io.stdoutIsTTY, colors, now: ctx.clock.now() }),
    json: (document) => writeText(io.stdout, formatJson(document, io.stdoutIsTTY)),
    jsonList: (key) => new JsonListWriter(io.stdout, key, io.stdoutIsTTY),
    ndjson: (item) => writeText(io.stdout, formatNdjsonLine(item)),
    table: async (head, rows, title) => {
      const heading = title !== undefined && io.stdoutIsTTY ? `\n${colors.bold(title)}\n` : '';
      await writeText(io.stdout, heading + (await renderTable(head, rows, { tty: io.stdoutIsTTY, colors, columns: io.columns })));
    },
    card: (sections) => writeText(io.stdout, renderCard(sections, colors)),
    note: (message) => writeText(io.stderr, `${message}\n`),
  };
}
