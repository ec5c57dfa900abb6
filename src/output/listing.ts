import { UsageError } from '../errors';
import type { Column, Format, Output } from './index';

/** How a list is printed: the service's JSON document, one item a line, or a table. */
export type ListMode = 'json' | 'ndjson' | 'table';

/** `--ndjson` wins over the global `--json`: it is the more specific request. */
export function listMode(globalJson: boolean, ndjson: boolean): ListMode {
  if (ndjson) return 'ndjson';
  return globalJson ? 'json' : 'table';
}

/** A terminal table of `--all` is printed in blocks of this many rows. */
const TABLE_ROWS_HELD = 1000;

/** What every paged list of the contract carries besides its items. */
export interface ListData {
  total_count?: number | null;
  has_more?: boolean | null;
}

/** A page as the API client returns it: the document as sent, and parsed. */
export interface ListPage<Data extends ListData> {
  json: unknown;
  data: Data;
}

export interface ListSpec<Data extends ListData, Item> {
  /** The array's name in the service's document (`documents`, `deliverables`). */
  key: string;
  items(data: Data): Item[];
  head: Column[];
  row(item: Item, format: Format): string[];
}

export interface ListSummary {
  shown: number;
  /** `total_count` of the last page (the items shown when the service did not say). */
  totalCount: number;
  hasMore: boolean;
}

/** The raw items of a page, so that `--json` and `--ndjson` keep fields this version does not know. */
function rawItems(json: unknown, key: string): unknown[] {
  const items = (json as Record<string, unknown> | null)?.[key];
  return Array.isArray(items) ? items : [];
}

/** One page (no `--all`): the document as sent, its items a line each, or a table. */
export async function printPage<Data extends ListData, Item>(
  out: Output,
  mode: ListMode,
  spec: ListSpec<Data, Item>,
  page: ListPage<Data>,
): Promise<ListSummary> {
  const items = spec.items(page.data);
  if (mode === 'json') await out.json(page.json, spec.key);
  else if (mode === 'ndjson') for (const item of rawItems(page.json, spec.key)) await out.ndjson(item);
  else if (items.length > 0) await out.table(spec.head, items.map((item) => spec.row(item, out.format)));
  return { shown: items.length, totalCount: page.data.total_count ?? items.length, hasMore: page.data.has_more === true };
}

/**
 * Every page (`--all`), printed as pages arrive: `--json` as ONE document with every item
 * (`{key: [...], total_count, has_more: false}`) streamed item by item, `--ndjson` a line per item,
 * and rows streamed as tab-separated lines off a terminal. A terminal table waits for more rows,
 * since its column widths depend on them, but never for more than TABLE_ROWS_HELD: memory stays
 * bounded however long the list. `--json` holds the first page until the second has come (or the
 * list ended): a service that ignores the offset shows on the second page, and then the command
 * fails with no document rather than half of one.
 */
export async function printAllPages<Data extends ListData, Item>(
  out: Output,
  mode: ListMode,
  spec: ListSpec<Data, Item>,
  pages: AsyncIterable<ListPage<Data>>,
): Promise<ListSummary> {
  const writer = mode === 'json' ? out.jsonList(spec.key) : undefined;
  const tableRows: string[][] = [];
  let shown = 0;
  let totalCount = 0;
  const print = async (page: ListPage<Data>) => {
    totalCount = page.data.total_count ?? shown;
    if (mode === 'table') {
      const rows = spec.items(page.data).map((item) => spec.row(item, out.format));
      shown += rows.length;
      if (out.forPeople) tableRows.push(...rows);
      else if (rows.length > 0) await out.table(spec.head, rows);
      if (tableRows.length >= TABLE_ROWS_HELD) await out.table(spec.head, tableRows.splice(0));
      return;
    }
    for (const item of rawItems(page.json, spec.key)) {
      shown += 1;
      if (writer) await writer.add(item);
      else await out.ndjson(item);
    }
  };
  let held: ListPage<Data> | undefined;
  let pageNumber = 0;
  try {
    for await (const page of pages) {
      pageNumber += 1;
      if (writer && pageNumber === 1) {
        held = page;
        continue;
      }
      if (held) await print(held);
      held = undefined;
      await print(page);
    }
  } catch (error) {
    // The rows read are shown before the failure is reported; a JSON first page held back is dropped.
    if (tableRows.length > 0) await out.table(spec.head, tableRows);
    throw error;
  }
  if (held) await print(held);
  if (writer) await writer.end({ total_count: Math.max(totalCount, shown), has_more: false });
  if (tableRows.length > 0) await out.table(spec.head, tableRows);
  return { shown, totalCount: Math.max(totalCount, shown), hasMore: false };
}

/**
 * The stderr line after a list for people: an empty list says so (exit 0 all the same), a partial
 * page says how to get the rest. Nothing under `--json`, whose document says it all.
 */
export async function noteListSummary(
  out: Output,
  mode: ListMode,
  summary: ListSummary,
  what: { noun: string; scope: string; offset: number },
): Promise<void> {
  if (mode === 'json') return;
  if (summary.shown === 0) {
    const beyondEnd = summary.totalCount > 0 ? ` at offset ${what.offset} (${summary.totalCount} in all)` : '';
    await out.note(`No ${what.noun}${what.scope}${beyondEnd}.`);
  } else if (summary.hasMore && mode === 'table') {
    const next = what.offset + summary.shown;
    await out.note(`Showing ${summary.shown} of ${summary.totalCount} ${what.noun}; next page: --offset ${next}, or --all for every one.`);
  }
}

const MAX_PAGES_RULE = 'must be a whole number from 1 to 1000000';

/** `--max-pages <n>`: undefined when not given (the client's default applies). */
export function parseMaxPages(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const pages = /^\d{1,7}$/.test(String(value)) ? Number(value) : NaN;
  if (!(pages >= 1 && pages <= 1_000_000)) throw new UsageError(`--max-pages ${MAX_PAGES_RULE}`, { details: { '--max-pages': [MAX_PAGES_RULE] } });
  return pages;
}
