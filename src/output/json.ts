import type { Writable } from 'node:stream';
import { escapeJsonForTerminal } from './sanitize';
import { writeText } from './write';

/**
 * `--json` prints the service's document as it arrived (`ApiResponse.json`), so fields this version
 * does not know survive. Pretty (two-space indent) for a person at a terminal, one compact line for
 * a pipe; always one trailing newline.
 */
export function formatJson(document: unknown, pretty: boolean): string {
  return `${escapeJsonForTerminal(pretty ? JSON.stringify(document, null, 2) : JSON.stringify(document))}\n`;
}

/** `--json id,filename` -> `['id', 'filename']`; plain `--json` (and no `--json`) -> undefined. */
export function jsonFieldsOf(value: unknown): string[] | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return value.split(',').map((field) => field.trim());
}

/** Only `fields` of an object, in their order; an array's items each; anything else as it is. */
export function pickFields(value: unknown, fields: readonly string[] | undefined): unknown {
  if (fields === undefined) return value;
  if (Array.isArray(value)) return value.map((item) => pickFields(item, fields));
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(fields.filter((field) => field in record).map((field) => [field, record[field]]));
}

/** A list document (`{"documents": [...], "total_count": 3}`) with only `fields` of each item. */
export function pickItemFields(document: unknown, key: string, fields: readonly string[] | undefined): unknown {
  if (fields === undefined || document === null || typeof document !== 'object') return document;
  const record = document as Record<string, unknown>;
  return { ...record, [key]: pickFields(record[key], fields) };
}

/** One item a line (`--ndjson`). */
export function formatNdjsonLine(item: unknown): string {
  return `${escapeJsonForTerminal(JSON.stringify(item))}\n`;
}

/**
 * Streams `{"<key>": [item, ...], <fields>}` item by item: `--all --json` prints ONE document
 * whatever the number of pages, without holding every item. The text is byte-for-byte what
 * `formatJson` would print for the whole document.
 */
/** Receives a list item by item, then what follows the list. */
export interface ListWriter {
  add(item: unknown): Promise<void>;
  end(fields: Record<string, unknown>): Promise<void>;
}

export class JsonListWriter implements ListWriter {
  private count = 0;

  constructor(
    private readonly stream: Writable,
    private readonly key: string,
    private readonly pretty: boolean,
    private readonly fields?: readonly string[],
  ) {}

  async add(item: unknown): Promise<void> {
    const separator = this.count === 0 ? this.head() : ',';
    const picked = pickFields(item, this.fields);
    const body = this.pretty ? `\n    ${JSON.stringify(picked, null, 2).replace(/\n/g, '\n    ')}` : JSON.stringify(picked);
    this.count += 1;
    await writeText(this.stream, separator + escapeJsonForTerminal(body));
  }

  /** Closes the list and appends `fields` after it, in their order. */
  async end(fields: Record<string, unknown>): Promise<void> {
    let text = this.count === 0 ? `${this.head()}]` : this.pretty ? '\n  ]' : ']';
    for (const [name, value] of Object.entries(fields)) {
      text += this.pretty
        ? `,\n  ${JSON.stringify(name)}: ${JSON.stringify(value, null, 2).replace(/\n/g, '\n  ')}`
        : `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
    }
    await writeText(this.stream, `${escapeJsonForTerminal(text)}${this.pretty ? '\n}' : '}'}\n`);
  }

  private head(): string {
    const key = JSON.stringify(this.key);
    return this.pretty ? `{\n  ${key}: [` : `{${key}:[`;
  }
}
