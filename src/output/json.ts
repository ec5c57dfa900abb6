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

/** One item a line (`--ndjson`). */
export function formatNdjsonLine(item: unknown): string {
  return `${escapeJsonForTerminal(JSON.stringify(item))}\n`;
}

/**
 * Streams `{"<key>": [item, ...], <fields>}` item by item: `--all --json` prints ONE document
 * whatever the number of pages, without holding every item. The text is byte-for-byte what
 * `formatJson` would print for the whole document.
 */
export class JsonListWriter {
  private count = 0;

  constructor(
    private readonly stream: Writable,
    private readonly key: string,
    private readonly pretty: boolean,
  ) {}

  async add(item: unknown): Promise<void> {
    const separator = this.count === 0 ? this.head() : ',';
    const body = this.pretty ? `\n    ${JSON.stringify(item, null, 2).replace(/\n/g, '\n    ')}` : JSON.stringify(item);
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
