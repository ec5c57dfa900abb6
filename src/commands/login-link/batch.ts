import type { AccountItem } from '../../batch/accountInput';
import { CliError, EXIT } from '../../errors';
import type { Ledger } from '../../batch/ledgers/loginLinks';
import type { Output } from '../../output';
import type { Palette } from '../../output/colors';
import { cells, runBatch, type BatchJob } from '../../batch/run';
import { definedOnly } from '../parseFlags';
import { generateLink, requestBody, type Outcome, type Session } from './generate';
import type { RunFlags } from './options';

/**
 * An intent without an answer from an earlier run: the service may have made that link and
 * emailed it. Generating again would invalidate it, so the item is reported, not sent, unless the
 * operator passes `--reissue-uncertain` after checking with the client.
 */
export class UncertainLinkError extends CliError {
  readonly exitCode = EXIT.PARTIAL;
  readonly code = 'LINK_STATE_UNCERTAIN';
}

export function uncertainError(item: AccountItem, intentAt: string): UncertainLinkError {
  return new UncertainLinkError(
    `a run interrupted at ${intentAt} asked for this link but got no answer; it may have been generated and emailed, so it was not sent again`,
    { details: { account_id: item.account_id, intent_at: intentAt }, hint: 'Check with the client, then re-run with --reissue-uncertain to generate it anyway.' },
  );
}

export interface BatchPlan {
  /** Items to send, in input order. */
  send: AccountItem[];
  /** Items settled without sending (skipped, uncertain): reported first. */
  settled: Outcome[];
  /** The ledger run the items belong to, ended once every item has its link. */
  run?: string;
}

/** Login links as a batch job: one link per item, recorded in the login-link ledger. */
function loginLinkJob(session: Session, ledger: Ledger, plan: BatchPlan, flags: RunFlags): BatchJob<AccountItem, Outcome> {
  return {
    noun: 'login links',
    tally: [
      ['issued', 'generated'],
      ['failed', 'failed'],
      ['skipped', 'skipped'],
    ],
    send: async (item, { pacer, signal }) => ({
      kind: 'issued',
      item,
      response: await generateLink(session, ledger, item, requestBody(flags.request, item), { run: plan.run, pacer, signal }),
    }),
    failed: (item, error) => ({ kind: 'failed', item, error }),
    json: outcomeJson,
    line: outcomeLine,
    // A fresh link skipped by renewal is the normal case of every cron run: counted, not printed.
    shown: (outcome, ctx) => ctx.globals.verbose || !(outcome.kind === 'skipped' && outcome.reason === 'fresh'),
    label: (item) => String(item.account_id),
  };
}

/**
 * Runs the plan on the batch engine (`src/batch/run.ts`). Returns 0 when every item succeeded,
 * else `EXIT.PARTIAL`; a run that got every link is ended in the ledger.
 */
export async function runLinkBatch(session: Session, ledger: Ledger, plan: BatchPlan, flags: RunFlags): Promise<number> {
  const { ctx } = session;
  const result = await runBatch(ctx, loginLinkJob(session, ledger, plan, flags), plan, { concurrency: flags.concurrency });
  if (result.exitCode !== EXIT.OK) return result.exitCode;
  // A run ends when every item has its link; until then the same batch run again resumes it.
  if (plan.run) await ledger.endRun(plan.run, ctx.clock.now());
  return EXIT.OK;
}

/** The item as the input gave it, echoed beside an error so a script can match it up. */
export function inputOf(item: AccountItem): Record<string, unknown> {
  return definedOnly({ origin: item.origin, account_id: item.account_id, user_email: item.user_email, purpose: item.purpose, expiry_hours: item.expiry_hours });
}

/** One outcome as an NDJSON value: the service's link record as sent, or the input with what happened. */
export function outcomeJson(outcome: Outcome): unknown {
  switch (outcome.kind) {
    case 'issued':
      return outcome.response.json;
    case 'failed':
      return { input: inputOf(outcome.item), error: outcome.error.toBody().error };
    case 'skipped':
      return { input: inputOf(outcome.item), skipped: definedOnly({ reason: outcome.reason, expires_at: outcome.expiresAt }) };
  }
}

/** One outcome as a line for people: aligned on a terminal, tab-separated for `cut`/`awk` otherwise. */
export function outcomeLine(outcome: Outcome, out: Output, colors: Palette): string {
  const { format } = out;
  const tty = out.forPeople;
  const account = String(outcome.item.account_id);
  let row: string[];
  switch (outcome.kind) {
    case 'issued': {
      const record = outcome.response.data;
      const expires = tty ? `expires ${format.date(record.expires_at)}` : format.text(record.expires_at);
      row = [tty ? colors.green('✓') : 'issued', account, format.text(record.user_email), expires, format.text(record.login_link)];
      break;
    }
    case 'failed':
      row = [tty ? colors.red('✗') : 'failed', account, outcome.item.user_email ?? '-', outcome.error.code, format.text(outcome.error.message)];
      break;
    case 'skipped': {
      const expires = outcome.expiresAt === undefined ? '' : tty ? `expires ${format.date(outcome.expiresAt)}` : outcome.expiresAt;
      row = [tty ? colors.dim('-') : 'skipped', account, outcome.item.user_email ?? '-', outcome.reason, expires];
      break;
    }
  }
  return cells(row, out);
}
