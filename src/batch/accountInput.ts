import { ledgerPlaceOf } from '../state/backend';
import * as z from 'zod';
import { EXPIRY_HOURS, email, fieldErrors, integer, loginLinkPurpose, pathId } from '../contract';
import { UsageError } from '../errors';
import type { Context } from '../types';
import { sanitizeLine } from '../output/sanitize';
import { badRowsError, checkRows, csvHeader, csvRecords, csvRows, firstLine as firstLineOf, ndjsonRows, readInputText, sourceName, type RawRow } from './input';
import { ACCOUNTS, readAccountsLedger } from './ledgers/accounts';

/**
 * The one input for every command that takes a set of accounts (`login-link --from`,
 * `login-link renew --from`, `status`/`watch --accounts`): one account id a line, a CSV or NDJSON
 * with `account_id` (and per-item link fields), the file an `accounts import` read (its emails
 * looked up in the accounts ledger), or the `--results` file an import wrote.
 */

/** One account (and, for links, one user of it): where it came from and what a line may set per item. */
export interface AccountItem {
  /** Where the item came from, for messages: `line 7` of a file, `argument 2` on the command line. */
  origin: string;
  account_id: number;
  user_email?: string;
  /** Any text: the contract does not say whether purposes beyond its listed five are refused. */
  purpose?: string;
  expiry_hours?: number;
}

export type InputFormat = 'ids' | 'csv' | 'ndjson';

/** What a file with columns is: link items, an import's own input, or an import's results. */
type Shape = 'items' | 'import' | 'results';

/** The per-item fields: the contract's own rules, so a line is refused exactly as the service would. */
const ItemFields = z.strictObject({
  account_id: pathId,
  user_email: email.optional(),
  purpose: loginLinkPurpose.optional(),
  expiry_hours: integer(EXPIRY_HOURS.min, EXPIRY_HOURS.max).optional(),
});
export const ITEM_COLUMNS = Object.keys(ItemFields.shape);

/** The columns of an import, in the words of `POST /accounts` (the spouse's flattened). */
export const IMPORT_COLUMNS = ['email', 'first_name', 'last_name', 'spouse_email', 'spouse_first_name', 'spouse_last_name', 'send_invitation'] as const;
/**
 * The columns of an import's `--results` file and of each of its `--json` lines: `spouse_email`
 * is the spouse invited with the account (who has a login link to renew too), else empty.
 */
export const RESULT_COLUMNS = ['line', 'email', 'status', 'account_id', 'spouse_email', 'error_code', 'error_message'] as const;

/** `true`/`false` as a spreadsheet writes them (also yes/no, 1/0); anything else is left for the contract's rule to refuse. */
export function booleanCell(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const word = value.toLowerCase();
  if (['true', 'yes', '1'].includes(word)) return true;
  if (['false', 'no', '0'].includes(word)) return false;
  return value;
}

/** The account an import's email names, as the accounts ledger knows it at this service. */
export type EmailLookup = (email: string) => number | undefined;

/** Which shape a header (CSV) or first object's keys (NDJSON) has, or why none fits. */
function shapeOf(names: readonly string[]): Shape | undefined {
  const within = (columns: readonly string[]) => names.every((name) => columns.includes(name));
  if (names.includes('account_id') && names.includes('status') && within(RESULT_COLUMNS)) return 'results';
  if (names.includes('email') && within(IMPORT_COLUMNS)) return 'import';
  // Any other file with an account_id is one of link items, whose columns then refuse what is not theirs.
  if (names.includes('account_id')) return 'items';
  return undefined;
}

/** Said once for a file none of whose columns names an account. */
function noUsableColumn(source: string, names: readonly string[]): UsageError {
  const has = names.length === 0 ? 'no columns' : `the columns ${names.map((name) => JSON.stringify(sanitizeLine(name))).join(', ')}`;
  return new UsageError(`${source} has no column that names an account: it has ${has}`, {
    hint:
      `Give an account_id column (with ${ITEM_COLUMNS.filter((name) => name !== 'account_id').join(', ')} if you like), ` +
      'the file an accounts import read (its email column, looked up in the accounts ledger), ' +
      'the --results file of an import, or one account id a line.',
  });
}

/** The keys of the first NDJSON object (a line that starts with `{`, so an object if it parses): none when it is not JSON. */
function ndjsonKeys(firstLine: string): string[] {
  try {
    return Object.keys(JSON.parse(firstLine) as object);
  } catch {
    return [];
  }
}

/**
 * The format, from the first non-blank line: `{` starts NDJSON; a line with a comma, or naming a
 * column any shape knows, is a CSV header; anything else is one account id a line.
 */
function formatOf(firstLine: string): InputFormat {
  if (firstLine.startsWith('{')) return 'ndjson';
  if (firstLine.startsWith('#')) return 'ids';
  if (firstLine.includes(',')) return 'csv';
  const known: readonly string[] = [...ITEM_COLUMNS, ...IMPORT_COLUMNS, ...RESULT_COLUMNS];
  return known.includes(firstLine.replace(/^"|"$/g, '').trim()) ? 'csv' : 'ids';
}

/** An input's rows as read, before they are checked: the shape says how (and whether it needs the accounts ledger). */
interface ReadInput {
  format: InputFormat;
  shape: Shape;
  raws: RawRow[];
}

/**
 * Reads account input, detecting its format and shape (see the module's comment): a file that
 * cannot be read as any of them fails with a usage error here, before the accounts ledger is read.
 */
function readRows(text: string, source: string): ReadInput {
  const content = text.replace(/^\uFEFF/, '');
  const firstLine = firstLineOf(content);
  if (firstLine === undefined) throw new UsageError(`${source} holds no account ids`, { hint: 'Give one account id a line, a CSV with an account_id column, or NDJSON objects.' });
  const format = formatOf(firstLine);
  if (format === 'ids') return { format, shape: 'items', raws: idRows(content) };

  // A CSV is read whole once: its header is its first record, and a syntax error in it is refused by its line like any other.
  const records = format === 'csv' ? csvRecords(content, source) : undefined;
  // A non-blank first line makes a record.
  const names = records === undefined ? ndjsonKeys(firstLine) : csvHeader(records[0]!);
  const shape = shapeOf(names);
  if (shape === undefined) throw noUsableColumn(source, names);
  const columns: readonly string[] = shape === 'items' ? ITEM_COLUMNS : shape === 'results' ? RESULT_COLUMNS : IMPORT_COLUMNS;
  return { format, shape, raws: records === undefined ? ndjsonRows(content, columns, '{"account_id": 1001}') : csvRows(records, source, columns) };
}

/** Items read, and the lines refused with every rule each breaks (`--skip-invalid` goes on without them). */
export interface CheckedInput {
  items: AccountItem[];
  /** One problem a line: `line 4: account_id must be a positive integer`. */
  problems: string[];
  badLines: number;
}

/**
 * Every line checked before anything is sent, its bad lines listed (`orRefuse` makes them a usage
 * error naming each line and rule). `lookup` resolves an import's emails (see `readAccountInput`).
 */
function checkedItems({ shape, raws }: ReadInput, source: string, lookup: EmailLookup | undefined): CheckedInput {
  if (shape === 'results') return validateItems(resultRows(raws), source);
  if (shape === 'import') return validateItems(importRows(raws, lookup ?? (() => undefined)), source);
  return validateItems(raws, source);
}

/** The items, or the usage error (exit 2) that lists the bad lines: nothing is sent. */
function orRefuse(checked: CheckedInput, source: string): AccountItem[] {
  if (checked.problems.length > 0) throw badRowsError(source, checked.problems, checked.badLines);
  return checked.items;
}

/** Reads and checks account input (see `readRows` and `checkedItems`). */
export function parseAccountInput(text: string, source: string, lookup?: EmailLookup): { format: InputFormat; items: AccountItem[] } {
  const read = readRows(text, source);
  return { format: read.format, items: orRefuse(checkedItems(read, source, lookup), source) };
}

/**
 * An import's results: the rows that ended with an account (`created`, `exists`, `skipped`), and
 * the spouse's link too when the spouse was invited (`spouse_email`); a `failed` row has none,
 * and is left out.
 */
function resultRows(raws: RawRow[]): RawRow[] {
  return raws.flatMap((raw) => {
    if (raw.fields === undefined) return [raw];
    if (raw.fields.status === 'failed') return [];
    const { account_id: accountId, spouse_email: spouse } = raw.fields;
    const rows: RawRow[] = [{ ...raw, fields: { account_id: accountId } }];
    if (typeof spouse === 'string' && spouse !== '') rows.push({ ...raw, fields: { account_id: accountId, user_email: spouse } });
    return rows;
  });
}

/**
 * An import's own input: each holder's account found by email in the accounts ledger, and the
 * spouse's link too when the spouse was invited (the link came with the account). An email the
 * ledger does not know is a problem of its line: the account may be someone else's.
 */
function importRows(raws: RawRow[], lookup: EmailLookup): RawRow[] {
  return raws.flatMap((raw): RawRow[] => {
    const fields = raw.fields;
    if (fields === undefined) return [raw];
    const holder = typeof fields.email === 'string' ? fields.email : undefined;
    if (holder === undefined) return [{ ...raw, fields: undefined, problem: 'has no email to find its account by' }];
    const accountId = lookup(holder);
    if (accountId === undefined) {
      return [{ ...raw, fields: undefined, problem: `names ${sanitizeLine(holder)}, whose account the accounts ledger does not know at this service (import it first, or give its account_id)` }];
    }
    const rows: RawRow[] = [{ ...raw, fields: { account_id: accountId } }];
    if (typeof fields.spouse_email === 'string' && booleanCell(fields.send_invitation) !== false) rows.push({ ...raw, fields: { account_id: accountId, user_email: fields.spouse_email } });
    return rows;
  });
}

/** Account ids given as command-line arguments. */
export function itemsFromArguments(ids: readonly string[]): AccountItem[] {
  const checked = validateItems(
    ids.map((id, index) => ({ line: index + 1, origin: `argument ${index + 1}`, fields: { account_id: id } })),
    'the command line',
  );
  return orRefuse(checked, 'the command line');
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

function validateItems(raws: RawRow[], source: string): CheckedInput {
  const firstOrigin = new Map<string, string>();
  const { items, bad } = checkRows<AccountItem>(raws, (raw) => {
    const parsed = ItemFields.safeParse(raw.fields);
    if (!parsed.success) return { problems: Object.entries(fieldErrors(parsed.error)).map(([field, messages]) => `${field} ${messages.join('; ')}`) };
    const item: AccountItem = { origin: raw.origin, ...parsed.data };
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
  // Not even one good line: nothing to go on with, --skip-invalid or not.
  if (items.length === 0 && problems.length > 0) throw badRowsError(source, problems, bad.length);
  if (items.length === 0) throw new UsageError(`${source} holds no account ids`);
  return { items, problems, badLines: bad.length };
}

/**
 * Reads account input from `path` (`-`: stdin); `flag` names it in messages. An import's input is
 * resolved through the accounts ledger of the service at `baseUrl` (read only then).
 */
export async function readAccountInput(ctx: Pick<Context, 'io' | 'env' | 'state'>, path: string, flag: string, baseUrl: () => Promise<string>): Promise<AccountItem[]> {
  return orRefuse(await readAccountInputLines(ctx, path, flag, baseUrl), sourceName(path));
}

/** `readAccountInput` with its bad lines listed rather than refused: for `--skip-invalid`. */
export async function readAccountInputLines(ctx: Pick<Context, 'io' | 'env' | 'state'>, path: string, flag: string, baseUrl: () => Promise<string>): Promise<CheckedInput> {
  const source = sourceName(path);
  const read = readRows(await readInputText(ctx, path, flag), source);
  let lookup: EmailLookup | undefined;
  if (read.shape === 'import') {
    const [ledger, origin] = await Promise.all([ledgerPlaceOf(ACCOUNTS, ctx, { ledgerPath: undefined }).then((place) => readAccountsLedger(place.lines)), baseUrl().then((url) => new URL(url).origin)]);
    lookup = (holder) => ledger.findAccount(origin, holder)?.account_id;
  }
  return checkedItems(read, source, lookup);
}
