import * as z from 'zod';
import { EXPIRY_HOURS, email, enumFilter, fieldErrors, integer, pathId, type LoginLinkPurpose } from '../../contract';
import { UsageError } from '../../errors';
import { badRowsError, checkRows, csvRows, firstLine as firstLineOf, ndjsonRows, type RawRow } from '../../batch/input';

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

/**
 * Reads `--from` input, detecting its format from the first non-blank line: `{` starts NDJSON, a
 * line naming `account_id` (alone or among other columns) is a CSV header, anything else is one
 * account id a line (`#` comments allowed). Every line is checked before anything is sent: a bad
 * line fails the whole input with a usage error naming each line and rule.
 */
export function parseLoginLinkInput(text: string, source: string): { format: InputFormat; items: LoginLinkItem[] } {
  const content = text.replace(/^\uFEFF/, '');
  const firstLine = firstLineOf(content);
  if (firstLine === undefined) throw new UsageError(`${source} holds no account ids`, { hint: 'Give one account id a line, a CSV with an account_id column, or NDJSON objects.' });

  const format: InputFormat = firstLine.startsWith('{') ? 'ndjson' : /(^|,)\s*"?account_id"?\s*(,|$)/.test(firstLine) ? 'csv' : 'ids';
  const raws = format === 'ndjson' ? ndjsonRows(content, ITEM_COLUMNS, '{"account_id": 1001}') : format === 'csv' ? csvRows(content, source, ITEM_COLUMNS) : idRows(content);
  return { format, items: validateItems(raws, source) };
}

/** Account ids given as command-line arguments. */
export function itemsFromArguments(ids: readonly string[]): LoginLinkItem[] {
  return validateItems(
    ids.map((id, index) => ({ line: index + 1, origin: `argument ${index + 1}`, fields: { account_id: id } })),
    'the command line',
  );
}

/** One account id a line; `#` starts a comment line. */
function idRows(content: string): RawRow[] {
  const rows: RawRow[] = [];
  content.split(/\r?\n/).forEach((line, index) => {
    const id = line.trim();
    if (id === '' || id.startsWith('#')) return;
    rows.push({ line: index + 1, origin: `line ${index + 1}`, fields: { account_id: id } });
  });
  return rows;
}

function validateItems(raws: RawRow[], source: string): LoginLinkItem[] {
  const firstOrigin = new Map<string, string>();
  const { items, bad } = checkRows<LoginLinkItem>(raws, (raw) => {
    const parsed = ItemFields.safeParse(raw.fields);
    if (!parsed.success) return { problems: Object.entries(fieldErrors(parsed.error)).map(([field, messages]) => `${field} ${messages.join('; ')}`) };
    const item: LoginLinkItem = { origin: raw.origin, ...parsed.data };
    // A second link for the same user would invalidate the first one within the same run.
    const target = `${item.account_id}|${item.user_email?.toLowerCase() ?? ''}`;
    const earlier = firstOrigin.get(target);
    if (earlier !== undefined) {
      return { problems: [`account ${item.account_id}${item.user_email ? ` (${item.user_email})` : ''} repeats ${earlier}; a second link would invalidate the first`] };
    }
    firstOrigin.set(target, raw.origin);
    return { item };
  });
  // A line that could not be read says so after its origin; a rule it breaks follows a colon.
  const problems = bad.flatMap((row) => row.problems.map((problem) => (row.readable ? `${row.origin}: ${problem}` : `${row.origin} ${problem}`)));
  if (problems.length > 0) throw badRowsError(source, problems, problems.length);
  if (items.length === 0) throw new UsageError(`${source} holds no account ids`);
  return items;
}
