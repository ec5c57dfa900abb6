import { ledgerPlaceOf } from '../../state/backend';
import * as z from 'zod';
import type { ApiClient } from '../../api/types';
import type { Context } from '../../types';
import { ApiError, CliError, EXIT, UsageError } from '../../errors';
import { createOutput, label, wrapped, type Output } from '../../output';
import type { Palette } from '../../output/colors';
import { writeText } from '../../output/write';
import { readInputText, sourceName } from '../../batch/input';
import { RESULT_COLUMNS } from '../../batch/accountInput';
import { BATCH_FIELDS, batchFlagsOf, type BatchFlags } from '../../batch/options';
import { ACCOUNTS, readAccountsLedger, type AccountsLedger, type AccountsLedgerView } from '../../batch/ledgers/accounts';
import { openRecordFile, type RecordFile, type RecordValue } from '../../batch/records';
import { alignedCells, cells, plainWidth, runBatch, type BatchJob, type BatchPlan } from '../../batch/run';
import { sendTracked } from '../../batch/send';
import { parseFlagFields } from '../parseFlags';
import type { RawInvocation } from '../types';
import { problemLines, readImport, refuseImport, type AccountRow } from './importInput';
import { accountsSession, creationLinksOf, rememberCreationLinks, withAccountsLedger, type AccountsSession, type CreationLink } from './ledger';
import { importAccounts } from './register';

export interface ImportOptions extends BatchFlags {
  /** The input file, `-` for stdin. */
  file: string;
  /** `--links FILE`: the login links returned at creation (0600, appended). */
  links: string | undefined;
  /** `--results FILE`: one line per input row (CSV when it ends in .csv, else NDJSON). */
  results: string | undefined;
  skipInvalid: boolean;
  dryRun: boolean;
}

const RunFields = z.strictObject({ ...BATCH_FIELDS });

export function parseOptions(raw: RawInvocation): ImportOptions {
  const file = raw.args[0];
  if (typeof file !== 'string' || file === '') throw new UsageError('give the file of accounts to import (- for stdin)', { hint: 'Run `taxprep accounts import --help` for its columns.' });
  const text = (name: string) => (typeof raw.flags[name] === 'string' ? (raw.flags[name] as string) : undefined);
  return {
    file,
    ...batchFlagsOf(parseFlagFields(RunFields, importAccounts.flags!, raw.flags), raw.flags),
    links: text('links'),
    results: text('results'),
    skipInvalid: raw.flags.skipInvalid === true,
    dryRun: raw.flags.dryRun === true,
  };
}

/** What became of one input row. */
export type ImportOutcome =
  | { kind: 'created' | 'exists'; item: AccountRow; accountId: number | null }
  | { kind: 'skipped'; item: AccountRow; accountId: number }
  | { kind: 'failed'; item: AccountRow; error: CliError };

/** A row refused before sending (`--skip-invalid`): reported as failed, with every rule it breaks. */
class InvalidRowError extends CliError {
  readonly exitCode = EXIT.USAGE;
  readonly code = 'INVALID_ROW';
}

/** A row the run stopped before sending (Ctrl-C, the day's quota, a refused key). */
const NOT_SENT = { code: 'NOT_SENT', message: 'the run stopped before this row was sent; run the same command again to send it' };

/** The columns of `--links`: what the service returned at creation, never written anywhere else. */
const LINK_COLUMNS = ['line', 'email', 'account_id', 'login_link', 'login_link_expires_at', 'spouse_email', 'spouse_login_link', 'spouse_login_link_expires_at'] as const;

type Result = Record<(typeof RESULT_COLUMNS)[number], RecordValue>;

function resultOf(outcome: ImportOutcome): Result {
  const { item } = outcome;
  const base = { line: item.line, email: item.email, status: outcome.kind };
  if (outcome.kind === 'failed') return { ...base, account_id: null, spouse_email: null, error_code: outcome.error.code, error_message: outcome.error.message };
  return { ...base, account_id: outcome.accountId, spouse_email: invitedSpouse(item), error_code: null, error_message: null };
}

/** The spouse the row invited (sent a login link with the account), as renewal reads the results file. */
function invitedSpouse(row: AccountRow): string | null {
  const { spouse } = row.body;
  return spouse === undefined || spouse.send_invitation === false ? null : spouse.email;
}

/** A row that breaks a rule, as a failed outcome naming every rule. */
function invalidRow(line: number, problems: string[], email: unknown): ImportOutcome {
  const row: AccountRow = { line, email: typeof email === 'string' ? email : '', body: { email: '', first_name: '', last_name: '' } };
  return { kind: 'failed', item: row, error: new InvalidRowError(problems.join('; ')) };
}

/** The widest status, line and email of a run's rows: the columns its lines are aligned to on a terminal. */
function lineWidths(rows: readonly AccountRow[], out: Output): number[] {
  const widest = (values: string[]) => Math.max(0, ...values.map(plainWidth));
  return [widest(['✓ created', '= exists', '- skipped', '✗ failed']), widest(rows.map((row) => `line ${row.line}`)), widest(rows.map((row) => out.format.text(row.email || '-')))];
}

/** `line 7` and the account: `created`, `exists` and `skipped` with their id, `failed` with the code. */
function outcomeLine(outcome: ImportOutcome, out: Output, colors: Palette, widths: readonly number[]): string {
  const tty = out.forPeople;
  const result = resultOf(outcome);
  const mark = { created: colors.green('✓'), exists: colors.green('='), skipped: colors.dim('-'), failed: colors.red('✗') }[outcome.kind];
  const row = [tty ? `${mark} ${outcome.kind}` : outcome.kind, `line ${outcome.item.line}`, out.format.text(outcome.item.email || '-'), result.account_id === null ? '-' : String(result.account_id)];
  if (outcome.kind === 'failed') row.push(outcome.error.code, out.format.text(outcome.error.message));
  return alignedCells(row, widths, out);
}

/** The account id a 409 names as the partner's own: `existing_account_id` for this very email. */
function existingAccountId(error: unknown, email: string): number | undefined {
  if (!(error instanceof ApiError) || error.code !== 'DUPLICATE_EMAIL') return undefined;
  const details = error.details ?? {};
  const named = details.email;
  // A 409 about the spouse's email (another account's user) is not this row's account.
  if (typeof named === 'string' && named.toLowerCase() !== email.toLowerCase()) return undefined;
  const id = Number(details.existing_account_id);
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

interface ImportRun {
  ctx: Context;
  api: ApiClient;
  session: AccountsSession;
  ledger: AccountsLedger;
  results: RecordFile | undefined;
  links: RecordFile | undefined;
  /** Links returned at creation, for the login-link ledger at the end of the run. */
  creationLinks: CreationLink[];
  /** Every row of the run, to align its lines. */
  rows: readonly AccountRow[];
}

/** Accounts import as a batch job: one `POST /accounts` per row, each kept exact in the accounts ledger. */
function importJob(run: ImportRun): BatchJob<AccountRow, ImportOutcome> {
  const { ctx, api, session, ledger } = run;
  const fields = (email: string) => ({ origin: session.origin, email, profile: session.profile, at: ctx.clock.now() });
  let widths: number[] | undefined;
  return {
    noun: 'accounts',
    tally: [
      ['created', 'created'],
      ['exists', 'already there'],
      ['failed', 'failed'],
      ['skipped', 'skipped'],
    ],
    async send(row, pacing) {
      let intent: string | undefined;
      try {
        let accountId: number | null = null;
        await sendTracked(
          {
            recordIntent: async () => (intent = await ledger.recordIntent(fields(row.email))),
            send: () => api.call('createAccount', { body: row.body }),
            recordRefused: (id, error) => ledger.recordRefused(id, { ...fields(row.email), code: error.code }),
            async recordDone(id, answer) {
              const account = answer.data;
              accountId = typeof account.id === 'number' ? account.id : null;
              // Links exist only in this answer: written before the ledger line that makes a re-run skip the row.
              await run.links?.write({
                line: row.line,
                email: account.email ?? row.email,
                account_id: accountId,
                login_link: account.login_link ?? null,
                login_link_expires_at: account.login_link_expires_at ?? null,
                spouse_email: account.spouse?.email ?? null,
                spouse_login_link: account.spouse?.login_link ?? null,
                spouse_login_link_expires_at: account.spouse?.login_link_expires_at ?? null,
              });
              run.creationLinks.push(...creationLinksOf(session, account, row.email, ctx.clock.now()));
              // Without an id (a service that leaves it out) the intent stays open: the next run's 409 names it.
              if (accountId !== null) await ledger.recordAccount('created', { ...fields(row.email), account_id: accountId, source: 'import', intent: id }, { wait: false });
            },
            serviceNow: (answer) => Date.parse(answer.data.created_at ?? ''),
          },
          pacing,
        );
        return { kind: 'created', item: row, accountId };
      } catch (error) {
        const existing = existingAccountId(error, row.email);
        if (existing === undefined) throw error;
        await ledger.recordAccount('exists', { ...fields(row.email), account_id: existing, source: 'import', ...(intent === undefined ? {} : { intent }) }, { wait: false });
        return { kind: 'exists', item: row, accountId: existing };
      }
    },
    failed: (item, error) => ({ kind: 'failed', item, error }),
    json: resultOf,
    // Measured once, at the first line: the rows are all known before the run starts.
    line: (outcome, out, colors) => outcomeLine(outcome, out, colors, (widths ??= lineWidths(run.rows, out))),
    label: (row) => `line ${row.line}`,
    settle: async (outcome) => run.results?.write(resultOf(outcome)),
    async notSent(rows) {
      for (const row of rows) await run.results?.write({ line: row.line, email: row.email, status: 'failed', account_id: null, spouse_email: null, error_code: NOT_SENT.code, error_message: NOT_SENT.message });
    },
  };
}

/** The rows the ledger already knows are settled as `skipped`; the rest are sent. */
function planOf(ledger: AccountsLedgerView, origin: string, rows: AccountRow[], invalid: ImportOutcome[]): BatchPlan<AccountRow, ImportOutcome> & { uncertain: number } {
  const plan: BatchPlan<AccountRow, ImportOutcome> & { uncertain: number } = { send: [], settled: [...invalid], uncertain: 0 };
  for (const row of rows) {
    const known = ledger.findAccount(origin, row.email);
    if (known) plan.settled.push({ kind: 'skipped', item: row, accountId: known.account_id });
    else {
      if (ledger.uncertainIntent(origin, row.email)) plan.uncertain += 1;
      plan.send.push(row);
    }
  }
  return plan;
}

export async function run(ctx: Context, options: ImportOptions): Promise<number> {
  const source = sourceName(options.file);
  const input = readImport(await readInputText(ctx, options.file, ''), source);
  if (input.bad.length > 0 && !options.skipInvalid) throw refuseImport(source, input.bad);
  const invalid = input.bad.map((row) => invalidRow(row.line, row.problems, row.fields?.email));
  if (options.dryRun) return dryRun(ctx, options, input.rows, invalid, problemLines(input.bad));

  const [api, session] = await Promise.all([ctx.api(), accountsSession(ctx)]);
  return withAccountsLedger(ctx, options, async (ledger) => {
    // Opened under the lock: a run refused by it (exit 10) must not empty the running one's files.
    const results = options.results === undefined ? undefined : await openRecordFile(options.results, RESULT_COLUMNS, { append: false, flag: '--results' });
    try {
      const links = options.links === undefined ? undefined : await openRecordFile(options.links, LINK_COLUMNS, { append: true, flag: '--links' });
      try {
        const plan = planOf(ledger, session.origin, input.rows, invalid);
        if (plan.uncertain > 0) {
          await createOutput(ctx).note(
            `${plan.uncertain} row${plan.uncertain === 1 ? ' was' : 's were'} being sent when an earlier run stopped; sending again (the service's 409 names any account already made).`,
          );
        }
        const creationLinks: CreationLink[] = [];
        try {
          const result = await runBatch(ctx, importJob({ ctx, api, session, ledger, results, links, creationLinks, rows: [...input.rows, ...invalid.map((outcome) => outcome.item)] }), plan, { concurrency: options.concurrency });
          return result.exitCode;
        } finally {
          // Whatever stopped the run, the links already handed out are made known to renewal.
          await rememberCreationLinks(ctx, session, creationLinks, options.lockWaitMs);
        }
      } finally {
        await links?.close();
      }
    } finally {
      await results?.close();
    }
  });
}

/** One row of the dry run: plan, line, email, name, spouse (and whether invited), account. */
function planRow(plan: 'create' | 'skip', row: AccountRow, out: Output, account: string): string[] {
  const { spouse } = row.body;
  const invited = spouse === undefined ? '' : spouse.send_invitation === false ? ' (not invited)' : ' (invited)';
  return [plan, `line ${row.line}`, out.format.text(row.email), out.format.name(row.body.first_name, row.body.last_name), spouse === undefined ? '-' : `${out.format.text(spouse.email)}${invited}`, account];
}

/** `--dry-run`: each row with what would be done (a table on a terminal, the request body with --json); no lock, no request. */
async function dryRun(ctx: Context, options: ImportOptions, rows: AccountRow[], invalid: ImportOutcome[], problems: string[]): Promise<number> {
  const out = createOutput(ctx);
  const settings = await ctx.settings();
  const origin = new URL(settings.baseUrl).origin;
  const ledger: AccountsLedgerView = await readAccountsLedger((await ledgerPlaceOf(ACCOUNTS, ctx, options)).lines);
  const plan = planOf(ledger, origin, rows, []);
  if (ctx.globals.json) {
    for (const problem of problems) await out.ndjson({ plan: 'invalid', problem });
    for (const outcome of plan.settled) if (outcome.kind === 'skipped') await out.ndjson({ line: outcome.item.line, email: outcome.item.email, plan: 'skip', account_id: outcome.accountId });
    for (const row of plan.send) await out.ndjson({ line: row.line, email: row.email, plan: 'create', body: row.body });
  } else {
    for (const problem of problems) await writeText(ctx.io.stdout, cells(['invalid', problem], out));
    // The request bodies as people read them: one row per account, a table on a terminal, cells in a pipe.
    const rows = [
      ...plan.settled.flatMap((outcome) => (outcome.kind === 'skipped' ? [planRow('skip', outcome.item, out, `${outcome.accountId} (in the ledger)`)] : [])),
      ...plan.send.map((row) => planRow('create', row, out, '-')),
    ];
    if (out.forPeople && rows.length > 0) await out.table([label('Plan'), 'Line', 'Email', wrapped('Name'), wrapped('Spouse', { drop: 2 }), { title: 'Account', drop: 1 }], rows);
    else for (const row of rows) await writeText(ctx.io.stdout, cells(row, out));
  }
  await out.note(`dry run: ${plan.send.length} to create, ${plan.settled.length} already in the ledger, ${invalid.length} invalid; nothing was sent`);
  return 0;
}
