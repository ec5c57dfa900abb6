import { CreateAccountRequest, fieldErrors } from '../../contract';
import { UsageError } from '../../errors';
import { badRowsError, checkRows, csvHeader, csvRecords, csvRows, firstLine, ndjsonRows, type RowProblem } from '../../batch/input';
import { IMPORT_COLUMNS, booleanCell } from '../../batch/accountInput';

/** One account to create: the request body, and the input line it came from. */
export interface AccountRow {
  /** The 1-based line the row starts on in the input. */
  line: number;
  /** The primary holder's email as given (the ledger's key, compared without regard to case). */
  email: string;
  body: CreateAccountRequest;
}

const REQUIRED_COLUMNS = ['email', 'first_name', 'last_name'];
const SPOUSE_COLUMNS = ['spouse_email', 'spouse_first_name', 'spouse_last_name'] as const;

/** A request field's column: `spouse.email` is `spouse_email`, `spouse.send_invitation` is `send_invitation`. */
function columnOf(field: string): string {
  if (field === 'spouse.send_invitation') return 'send_invitation';
  return field.replace(/^spouse\./, 'spouse_');
}

/** The input read and checked: rows to send, and rows that break a rule (`line N: field: rule`). */
export interface ImportInput {
  rows: AccountRow[];
  bad: RowProblem[];
}

/**
 * Reads an import: NDJSON when the first non-blank line starts with `{`, else a CSV whose header
 * names the columns (any order; `email`, `first_name`, `last_name` required). Every row is
 * checked by the contract's own rules (`CreateAccountRequest`), plus what the service would
 * refuse for the file as a whole: the same email twice (as a holder or a spouse), a spouse with
 * the holder's own email, `send_invitation` without a spouse.
 */
export function readImport(text: string, source: string): ImportInput {
  const first = firstLine(text);
  if (first === undefined) throw new UsageError(`${source} holds no accounts`, { hint: 'Give a CSV with a header row (email,first_name,last_name,...) or NDJSON objects.' });
  const columns: readonly string[] = IMPORT_COLUMNS;
  // A CSV is read whole once: its header is its first record (a non-blank first line makes one).
  const records = first.startsWith('{') ? undefined : csvRecords(text, source);
  const raws = records === undefined ? ndjsonRows(text, columns, '{"email": "jane@example.com", "first_name": "Jane", "last_name": "Doe"}') : csvRows(records, source, columns);
  if (records !== undefined) {
    const header = csvHeader(records[0]!);
    const missing = REQUIRED_COLUMNS.filter((name) => !header.includes(name));
    if (missing.length > 0) throw new UsageError(`${source}: the header row has no ${missing.join(', ')} column${missing.length === 1 ? '' : 's'}; columns are ${IMPORT_COLUMNS.join(', ')}`);
  }

  const firstUse = new Map<string, number>();
  const { items, bad } = checkRows<AccountRow>(raws, (raw) => {
    const fields = raw.fields;
    const problems: string[] = [];
    const spouseGiven = SPOUSE_COLUMNS.filter((name) => fields[name] !== undefined);
    const body: Record<string, unknown> = { email: fields.email, first_name: fields.first_name, last_name: fields.last_name };
    if (spouseGiven.length > 0) {
      body.spouse = {
        email: fields.spouse_email,
        first_name: fields.spouse_first_name,
        last_name: fields.spouse_last_name,
        ...(fields.send_invitation === undefined ? {} : { send_invitation: booleanCell(fields.send_invitation) }),
      };
    } else if (fields.send_invitation !== undefined) {
      problems.push('send_invitation: applies to a spouse; give spouse_email, spouse_first_name and spouse_last_name too');
    }
    const parsed = CreateAccountRequest.safeParse(body);
    if (!parsed.success) {
      for (const [field, messages] of Object.entries(fieldErrors(parsed.error))) problems.push(`${columnOf(field)}: ${messages.join('; ')}`);
    }
    const emails: Array<[string, unknown]> = [
      ['email', fields.email],
      ['spouse_email', fields.spouse_email],
    ];
    if (typeof fields.email === 'string' && typeof fields.spouse_email === 'string' && fields.email.toLowerCase() === fields.spouse_email.toLowerCase()) {
      problems.push("spouse_email: must differ from the primary account holder's email");
    } else {
      for (const [column, value] of emails) {
        if (typeof value !== 'string') continue;
        const earlier = firstUse.get(value.toLowerCase());
        if (earlier !== undefined) problems.push(`${column}: ${value} is already used on line ${earlier} (an email belongs to one user of one account)`);
        else firstUse.set(value.toLowerCase(), raw.line);
      }
    }
    if (problems.length > 0 || !parsed.success) return { problems };
    return { item: { line: raw.line, email: parsed.data.email, body: parsed.data } };
  });
  if (items.length === 0 && bad.length === 0) throw new UsageError(`${source} holds no accounts`);
  return { rows: items, bad };
}

/** Every problem as `line N: field: rule`, a line that could not be read as `line N: why`. */
export function problemLines(bad: readonly RowProblem[]): string[] {
  return bad.flatMap((row) => row.problems.map((problem) => `${row.origin}: ${problem}`));
}

/** How many problems the message of a refused import lists (all of them are in `details.problems`). */
const LISTED_PROBLEMS = 100;

/** The usage error (exit 2) for an import with bad rows when `--skip-invalid` is not given. */
export function refuseImport(source: string, bad: readonly RowProblem[]): UsageError {
  return badRowsError(source, problemLines(bad), bad.length, {
    listed: LISTED_PROBLEMS,
    hint: 'Fix those lines, or pass --skip-invalid to import the good rows and report the bad ones as failed.',
  });
}
