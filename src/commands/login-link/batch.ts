import { QuotaExhaustedError, RateLimitPacer } from './lib/pacer';
import type { LoginLinkItem } from './lib/input';
import { runPool } from './lib/pool';
import { createProgress, formatRate, type Progress } from './lib/batchProgress';
import { CliError, EXIT } from '../../errors';
import { formatDuration } from '../../lib/duration';
import type { Ledger } from './lib/ledgerStore';
import { createOutput, type Output } from '../../output';
import { palette, type Palette } from '../../output/colors';
import { writeText } from '../../output/write';
import { definedOnly } from '../parseFlags';
import { generateLink, isGlobalFailure, requestBody, type Outcome, type Session } from './generate';
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

export function uncertainError(item: LoginLinkItem, intentAt: string): UncertainLinkError {
  return new UncertainLinkError(
    `a run interrupted at ${intentAt} asked for this link but got no answer; it may have been generated and emailed, so it was not sent again`,
    { details: { account_id: item.account_id, intent_at: intentAt }, hint: 'Check with the client, then re-run with --reissue-uncertain to generate it anyway.' },
  );
}

export interface BatchPlan {
  /** Items to send, in input order. */
  send: LoginLinkItem[];
  /** Items settled without sending (skipped, uncertain): reported first. */
  settled: Outcome[];
  /** The ledger run the items belong to, ended once every item has its link. */
  run?: string;
}

/**
 * Sends the plan's items with bounded concurrency, paced to the key's rate limit, and prints each
 * outcome as it arrives (NDJSON with `--json`). Per-item failures do not stop the run; a global
 * one (key refused, quota gone, service unreachable) stops new items and is thrown after the summary.
 * Returns 0 when every item succeeded, else `EXIT.PARTIAL`.
 */
export async function runBatch(session: Session, ledger: Ledger, plan: BatchPlan, flags: RunFlags): Promise<number> {
  const { ctx } = session;
  const out = createOutput(ctx);
  const startedMs = ctx.clock.now().getTime();
  const progress = createProgress(ctx.io.stderr, {
    enabled: ctx.io.stderrIsTTY && !ctx.globals.json,
    total: plan.send.length + plan.settled.length,
    clock: ctx.clock,
  });
  const colors = palette(ctx.io.stdoutColor);
  const writeOutcome = ctx.globals.json
    ? (outcome: Outcome) => out.ndjson(outcomeJson(outcome))
    : (outcome: Outcome) => writeText(ctx.io.stdout, outcomeLine(outcome, out, colors));
  // A fresh link skipped by renewal is the normal case of every cron run: counted, not printed.
  const shown = (outcome: Outcome) => ctx.globals.verbose || !(outcome.kind === 'skipped' && outcome.reason === 'fresh');
  const printer = outcomePrinter((outcome) => (shown(outcome) ? writeOutcome(outcome) : Promise.resolve()), progress);
  for (const outcome of plan.settled) await printer.print(outcome);

  const pacer = new RateLimitPacer(ctx.clock);
  const stop = new AbortController();
  let globalFailure: CliError | undefined;
  try {
    await runPool(plan.send, flags.concurrency, stop.signal, async (item) => {
      try {
        const response = await generateLink(session, ledger, item, requestBody(flags.request, item), { run: plan.run, pacer, signal: stop.signal });
        await printer.print({ kind: 'issued', item, response });
      } catch (error) {
        if (stop.signal.aborted && error === stop.signal.reason) return;
        if (error instanceof QuotaExhaustedError) {
          // Nothing was sent for this item: it counts as not sent, like those after it.
          globalFailure ??= error;
          stop.abort();
          return;
        }
        if (!(error instanceof CliError)) throw error;
        if (isGlobalFailure(error)) {
          globalFailure ??= error;
          stop.abort();
        }
        await printer.print({ kind: 'failed', item, error });
      }
    });
  } catch (error) {
    stop.abort();
    throw error;
  } finally {
    progress.finish();
  }

  const counts = printer.counts();
  const elapsedMs = ctx.clock.now().getTime() - startedMs;
  const unsent = plan.send.length + plan.settled.length - counts.issued - counts.failed - counts.skipped;
  const rate = formatRate(counts.issued, elapsedMs);
  await out.note(
    `login links: ${counts.issued} generated, ${counts.failed} failed, ${counts.skipped} skipped` +
      (unsent > 0 ? `, ${unsent} not sent` : '') +
      ` in ${formatDuration(elapsedMs)}${rate === undefined ? '' : ` (${rate})`}` +
      failureList(printer.failures()),
  );
  if (globalFailure) throw globalFailure;
  if (counts.failed > 0) return EXIT.PARTIAL;
  // A run ends when every item has its link; until then the same batch run again resumes it.
  if (plan.run) await ledger.endRun(plan.run, ctx.clock.now());
  return EXIT.OK;
}

/** The item as the input gave it, echoed beside an error so a script can match it up. */
export function inputOf(item: LoginLinkItem): Record<string, unknown> {
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
  let cells: string[];
  switch (outcome.kind) {
    case 'issued': {
      const record = outcome.response.data;
      const expires = tty ? `expires ${format.date(record.expires_at)}` : format.text(record.expires_at);
      cells = [tty ? colors.green('✓') : 'issued', account, format.text(record.user_email), expires, format.text(record.login_link)];
      break;
    }
    case 'failed':
      cells = [tty ? colors.red('✗') : 'failed', account, outcome.item.user_email ?? '-', outcome.error.code, format.text(outcome.error.message)];
      break;
    case 'skipped': {
      const expires = outcome.expiresAt === undefined ? '' : tty ? `expires ${format.date(outcome.expiresAt)}` : outcome.expiresAt;
      cells = [tty ? colors.dim('-') : 'skipped', account, outcome.item.user_email ?? '-', outcome.reason, expires];
      break;
    }
  }
  return `${cells.filter((cell) => cell !== '').join(tty ? '  ' : '\t')}\n`;
}

/** Failures shown in the summary, so that stderr alone (a cron job's log) names them. */
const SUMMARY_FAILURES = 20;

/** `\nfailed: 1003 ACCOUNT_SUSPENDED, 1007 ACCOUNT_NOT_FOUND` (the first 20, then how many more). */
function failureList(failures: Array<{ account_id: number; code: string }>): string {
  if (failures.length === 0) return '';
  const listed = failures.slice(0, SUMMARY_FAILURES).map((failure) => `${failure.account_id} ${failure.code}`);
  const more = failures.length > SUMMARY_FAILURES ? ` and ${failures.length - SUMMARY_FAILURES} more` : '';
  return `\nfailed: ${listed.join(', ')}${more}`;
}

function outcomePrinter(write: (outcome: Outcome) => Promise<void>, progress: Progress) {
  const counts = { issued: 0, failed: 0, skipped: 0 };
  const failures: Array<{ account_id: number; code: string }> = [];
  // Lines are written one at a time, in the order outcomes arrive.
  let chain = Promise.resolve();
  return {
    counts: () => ({ ...counts }),
    failures: () => [...failures],
    print(outcome: Outcome): Promise<void> {
      counts[outcome.kind] += 1;
      if (outcome.kind === 'failed') failures.push({ account_id: outcome.item.account_id, code: outcome.error.code });
      chain = chain.then(async () => {
        progress.clear();
        await write(outcome);
        progress.advance();
      });
      return chain;
    },
  };
}
