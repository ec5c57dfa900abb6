import * as z from 'zod';
import { EXPIRY_HOURS, email, enumFilter, fieldErrors, integer, pathId, type LoginLinkPurpose } from '../../../contract';
import { UsageError } from '../../../errors';
import { sanitizeLine } from '../../../output/sanitize';
import { CsvSyntaxError, parseCsv } from './csv';

/** One login link to generate: an account, and what a CSV or NDJSON line may set per item. */
export interface LoginLinkItem {
  /** Where the item came from, for messages: `line 7` of a file, `argument 2` on the command line. */
  origin: string;
  account_id: number;
  user_email?: string;
  purpose?: LoginLinkPurpose;
  expiry_hours?: number;
}

export type InputFormat = 'ids' | 'csv' | 'ndjson';

/** The per-item fields: the contract's own rules, so a line is refused exactly as the service would. */
const ItemFields = z.strictObject({
  account_id: pathId,
  user_email: email.optional(),
  purpose: enumFilter.purpose.optional(),
  expiry_hours: integer(EXPIRY_HOURS.min, EXPIRY_HOURS.max).optional(),
});
export const ITEM_COLUMNS = Object.keys(ItemFields.shape);

/** How many bad lines a usage error lists before summarising the rest. */
const MAX_LISTED_PROBLEMS = 10;

/**
 * Reads `--from` input, detecting its format from the first non-blank line: `{` starts NDJSON, a
 * line naming `account_id` (alone or among other columns) is a CSV header, anything else is one
 * account id a line (`#` comments allowed). Every line is checked before anything is sent: a bad
 * line fails the whole input with a usage error naming each line and rule.
 */
export function parseLoginLinkInput(text: string, source: string): { format: InputFormat; items: LoginLinkItem[] } {
  const content = text.replace(/^\uFEFF/, '');
  const firstLine = content.split(/\r?\n/).find((line) => line.trim() !== '')?.trim();
  if (firstLine === undefined) throw new UsageError(`${source} holds no account ids`, { hint: 'Give one account id a line, a CSV with an account_id column, or NDJSON objects.' });

  const format: InputFormat = firstLine.startsWith('{') ? 'ndjson' : /(^|,)\s*"?account_id"?\s*(,|$)/.test(firstLine) ? 'csv' : 'ids';
  const raws = format === 'ndjson' ? ndjsonRows(content) : format === 'csv' ? csvRows(content, source) : idRows(content);
  return { format, items: validateItems(raws, source) };
}

/** Account ids given as command-line arguments. */
export function itemsFromArguments(ids: readonly string[]): LoginLinkItem[] {
  return validateItems(
    ids.map((id, index) => ({ origin: `argument ${index + 1}`, fields: { account_id: id } })),
    'the command line',
  );
}

interface RawItem {
  origin: string;
  /** Undefined when the line could not be read at all (`problem` says why). */
  fields?: Record<string, unknown>;
  problem?: string;
}

function idRows(content: string): RawItem[] {
  const rows: RawItem[] = [];
  content.split(/\r?\n/).forEach((line, index) => {
    const id = line.trim();
    if (id === '' || id.startsWith('#')) return;
    rows.push({ origin: `line ${index + 1}`, fields: { account_id: id } });
  });
  return rows;
}

function ndjsonRows(content: string): RawItem[] {
  const rows: RawItem[] = [];
  content.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const origin = `line ${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      rows.push({ origin, problem: 'is not valid JSON (NDJSON needs one JSON object a line)' });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      rows.push({ origin, problem: 'must be a JSON object such as {"account_id": 1001}' });
      return;
    }
    // Checked here, before the schema: a key such as `constructor` or `__proto__` must read as an
    // unknown field, like any other, and never as a member of an object's prototype.
    const unknown = Object.keys(value).filter((key) => !ITEM_COLUMNS.includes(key));
    if (unknown.length > 0) {
      rows.push({ origin, problem: `has unknown field ${unknown.map((key) => JSON.stringify(sanitizeLine(key))).join(', ')}; fields are ${ITEM_COLUMNS.join(', ')}` });
      return;
    }
    rows.push({ origin, fields: value as Record<string, unknown> });
  });
  return rows;
}

function csvRows(content: string, source: string): RawItem[] {
  let records;
  try {
    records = parseCsv(content);
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new UsageError(`${source}: line ${error.line}: ${error.message}`);
    throw error;
  }
  const [header, ...body] = records;
  const columns = header!.fields.map((name) => name.trim());
  const unknown = columns.filter((name) => !ITEM_COLUMNS.includes(name));
  if (unknown.length > 0) {
    throw new UsageError(`${source}: line ${header!.line}: unknown column ${unknown.map((name) => JSON.stringify(sanitizeLine(name))).join(', ')}; columns are ${ITEM_COLUMNS.join(', ')}`);
  }
  const repeated = columns.find((name, index) => columns.indexOf(name) !== index);
  if (repeated !== undefined) throw new UsageError(`${source}: line ${header!.line}: column "${repeated}" appears twice`);

  return body.map((record) => {
    const origin = `line ${record.line}`;
    if (record.fields.length !== columns.length) {
      return { origin, problem: `has ${record.fields.length} fields; the header has ${columns.length}` };
    }
    const fields: Record<string, unknown> = {};
    columns.forEach((name, index) => {
      const value = record.fields[index]!.trim();
      // An empty cell means "not given": the flag's value or the service's default applies.
      if (value !== '') fields[name] = value;
    });
    return { origin, fields };
  });
}

function validateItems(raws: RawItem[], source: string): LoginLinkItem[] {
  const problems: string[] = [];
  const items: LoginLinkItem[] = [];
  const firstOrigin = new Map<string, string>();

  for (const raw of raws) {
    if (raw.fields === undefined) {
      problems.push(`${raw.origin} ${raw.problem}`);
      continue;
    }
    const parsed = ItemFields.safeParse(raw.fields);
    if (!parsed.success) {
      for (const [field, messages] of Object.entries(fieldErrors(parsed.error))) problems.push(`${raw.origin}: ${field} ${messages.join('; ')}`);
      continue;
    }
    const item: LoginLinkItem = { origin: raw.origin, ...parsed.data };
    // A second link for the same user would invalidate the first one within the same run.
    const target = `${item.account_id}|${item.user_email?.toLowerCase() ?? ''}`;
    const earlier = firstOrigin.get(target);
    if (earlier !== undefined) {
      problems.push(`${raw.origin}: account ${item.account_id}${item.user_email ? ` (${item.user_email})` : ''} repeats ${earlier}; a second link would invalidate the first`);
      continue;
    }
    firstOrigin.set(target, raw.origin);
    items.push(item);
  }

  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
    const more = problems.length - listed.length;
    throw new UsageError(
      `${source} has ${problems.length} bad line${problems.length === 1 ? '' : 's'}; nothing was sent:\n  ${listed.join('\n  ')}${more > 0 ? `\n  (and ${more} more)` : ''}`,
      { details: { problems } },
    );
  }
  if (items.length === 0) throw new UsageError(`${source} holds no account ids`);
  return items;
}
