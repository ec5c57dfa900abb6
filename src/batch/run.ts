import type { Context } from '../types';
import { CliError, EXIT, InterruptedError } from '../errors';
import { formatDuration } from '../lib/duration';
import { createOutput, wrapLastCell, type Output } from '../output';
import { palette, type Palette } from '../output/colors';
import { writeText } from '../output/write';
import { QuotaExhaustedError, RateLimitPacer } from './pacer';
import { runPool } from './pool';
import { createProgress, formatRate, type Progress } from './progress';
import { isGlobalFailure } from './send';

/** What every outcome of a job has: a kind (`created`, `failed`...) and the item it is about. */
export interface OutcomeBase<I> {
  kind: string;
  item: I;
}

/** The failure outcome every job has: its kind is `failed` and it carries the error. */
export interface FailedOutcome<I> {
  kind: 'failed';
  item: I;
  error: CliError;
}

/**
 * What a command tells the engine about its items. `O` is the job's outcome union; it includes
 * `FailedOutcome<I>`. The engine paces, runs, prints, counts and stops; the job sends one item
 * and says how its outcomes read.
 */
export interface BatchJob<I, O extends OutcomeBase<I>> {
  /** Names the items in the summary: `login links: 3 generated, ...`. */
  noun: string;
  /** The outcome kinds in the summary's order, each with its word: `[['issued', 'generated'], ...]`. */
  tally: ReadonlyArray<readonly [O['kind'], string]>;
  /**
   * Sends one item (through `sendTracked` with the given pacer and signal) and returns its outcome.
   * A thrown `CliError` becomes a `failed` outcome (and stops the run when `isGlobalFailure`);
   * `QuotaExhaustedError` from the pacer ends the run with the item not sent.
   */
  send(item: I, run: { pacer: RateLimitPacer; signal: AbortSignal }): Promise<O>;
  /** The outcome of an item whose sending threw `error`. */
  failed(item: I, error: CliError): O;
  /** The outcome as one NDJSON value (`--json`). */
  json(outcome: O): unknown;
  /** The outcome as one line for people: aligned on a terminal, tab-separated in a pipe (`cells` helps). */
  line(outcome: O, out: Output, colors: Palette): string;
  /** Whether the outcome is printed (counted either way); default: all are. */
  shown?(outcome: O, ctx: Context): boolean;
  /** How the summary names an item beside its failure code: `1003`, `line 7 ann@example.com`. */
  label(item: I): string;
  /** Called once per outcome, in the order printed, before its line: a results file, a ledger line. */
  settle?(outcome: O): Promise<void>;
  /**
   * Called once, before the summary, with the items the run stopped before sending (Ctrl-C, the
   * day's quota, a refused key), so that a results file still names every item.
   */
  notSent?(items: I[]): Promise<void>;
}

/** The items of a run: those to send, in input order, and those settled without sending (printed first). */
export interface BatchPlan<I, O> {
  send: I[];
  settled: O[];
}

export interface BatchRunOptions {
  /** Requests at a time (`--concurrency`). */
  concurrency: number;
  /** An existing pacer to share (a run that checked something first); default: a new one. */
  pacer?: RateLimitPacer;
  /**
   * A progress display of the job's own (a file set's bytes, `./fileSetProgress.ts`) instead of
   * the count line; the engine clears it before each outcome line and finishes it at the end.
   */
  progress?: Progress;
}

export interface BatchResult<K extends string> {
  /** Outcomes per kind. */
  counts: Record<K, number>;
  /** Items neither sent nor settled (the run was stopped). */
  unsent: number;
  /** 0 when nothing failed, else `EXIT.PARTIAL`. (A stopped run throws instead of returning.) */
  exitCode: number;
}

/**
 * Sends the plan's items with bounded concurrency, paced to the key's rate limit, and prints each
 * outcome as it arrives (NDJSON with `--json`). Per-item failures do not stop the run; a global
 * one (key refused, quota gone, service unreachable) stops new items and is thrown after the
 * summary. Ctrl-C stops new items too: those in flight finish and are printed, then the summary,
 * then `InterruptedError` (exit 130). Returns the counts and exit code 0 or `EXIT.PARTIAL`.
 */
export async function runBatch<I, O extends OutcomeBase<I>>(ctx: Context, job: BatchJob<I, O>, plan: BatchPlan<I, O>, options: BatchRunOptions): Promise<BatchResult<O['kind']>> {
  const out = createOutput(ctx);
  const startedMs = ctx.clock.now().getTime();
  const total = plan.send.length + plan.settled.length;
  const progress = options.progress ?? createProgress(ctx.io.stderr, { enabled: ctx.io.stderrIsTTY && !ctx.globals.json, total, clock: ctx.clock });
  const colors = palette(ctx.io.stdoutColor);
  const writeOutcome = ctx.globals.json
    ? (outcome: O) => out.ndjson(job.json(outcome))
    : (outcome: O) => writeText(ctx.io.stdout, job.line(outcome, out, colors));
  const shown = (outcome: O) => job.shown?.(outcome, ctx) ?? true;
  const printer = outcomePrinter<I, O>(job, (outcome) => (shown(outcome) ? writeOutcome(outcome) : Promise.resolve()), progress);
  for (const outcome of plan.settled) await printer.print(outcome);

  const pacer = options.pacer ?? new RateLimitPacer(ctx.clock);
  const stopTellingWaits = pacer.onWait((untilMs) => progress.waiting(untilMs));
  const stop = new AbortController();
  const interrupted = ctx.interrupted();
  const stopOnInterrupt = () => stop.abort(interrupted.reason);
  interrupted.addEventListener('abort', stopOnInterrupt, { once: true });
  let globalFailure: CliError | undefined;
  const started = new Set<I>();
  try {
    if (interrupted.aborted) stopOnInterrupt();
    await runPool(plan.send, options.concurrency, stop.signal, async (item) => {
      started.add(item);
      try {
        await printer.print(await job.send(item, { pacer, signal: stop.signal }));
      } catch (error) {
        if (stop.signal.aborted && error === stop.signal.reason) {
          started.delete(item);
          return;
        }
        if (error instanceof QuotaExhaustedError) {
          // Nothing was sent for this item: it counts as not sent, like those after it.
          started.delete(item);
          globalFailure ??= error;
          stop.abort();
          return;
        }
        if (!(error instanceof CliError)) throw error;
        if (isGlobalFailure(error)) {
          globalFailure ??= error;
          stop.abort();
        }
        await printer.print(job.failed(item, error));
      }
    });
  } catch (error) {
    stop.abort();
    throw error;
  } finally {
    interrupted.removeEventListener('abort', stopOnInterrupt);
    stopTellingWaits();
    progress.finish();
  }

  await printer.idle();
  if (job.notSent && started.size < plan.send.length) await job.notSent(plan.send.filter((item) => !started.has(item)));
  const counts = printer.counts();
  const done = Object.values<number>(counts).reduce((sum, count) => sum + count, 0);
  const unsent = total - done;
  const elapsedMs = ctx.clock.now().getTime() - startedMs;
  const [firstKind] = job.tally[0]!;
  const rate = formatRate(counts[firstKind], elapsedMs);
  const summary =
    `${job.noun}: ${job.tally.map(([kind, word]) => `${counts[kind]} ${word}`).join(', ')}` +
    (unsent > 0 ? `, ${unsent} not sent` : '') +
    ` in ${formatDuration(elapsedMs)}${rate === undefined ? '' : ` (${rate})`}` +
    failureList(printer.failures());
  if (interrupted.aborted && globalFailure === undefined) {
    throw new InterruptedError(`interrupted: ${summary}`, { hint: 'Run the same command again to go on: what was done is not sent again.' });
  }
  await out.note(summary);
  if (globalFailure) throw globalFailure;
  return { counts, unsent, exitCode: ((counts as Record<string, number>).failed ?? 0) > 0 ? EXIT.PARTIAL : EXIT.OK };
}

/**
 * Joins a line's cells: a tab for `cut`/`awk`, or on a terminal two spaces, the last cell (a
 * reason, an error) wrapped between words under itself, never inside a word by the terminal.
 * Empty cells are left out.
 */
export function cells(values: string[], out: Output): string {
  const shown = values.filter((cell) => cell !== '');
  if (!out.forPeople) return `${shown.join('\t')}\n`;
  const last = shown.length - 1;
  return `${wrapLastCell(shown.slice(0, last).map((cell) => `${cell}  `).join(''), shown[last] ?? '', out.columns)}\n`;
}

/** A cell's width on a terminal, without its colour codes (cells hold codes, ids, emails and paths: one column a character). */
export function plainWidth(text: string): number {
  return text.replace(/\u001b\[[0-9;]*m/g, '').length;
}

/**
 * `cells`, with each cell but the last padded on a terminal to `widths` (the widest value of its
 * column over the whole run, known from the plan), so that lines printed one at a time, as items
 * finish, line up.
 */
export function alignedCells(values: string[], widths: readonly number[], out: Output): string {
  if (!out.forPeople) return cells(values, out);
  const last = values.length - 1;
  return cells(values.map((value, index) => (index < last && widths[index] !== undefined ? value + ' '.repeat(Math.max(0, widths[index]! - plainWidth(value))) : value)), out);
}

/** Failures shown in the summary, so that stderr alone (a cron job's log) names them. */
const SUMMARY_FAILURES = 20;

/** `\nfailed: 1003 ACCOUNT_SUSPENDED, 1007 ACCOUNT_NOT_FOUND` (the first 20, then how many more). */
function failureList(failures: Array<{ label: string; code: string }>): string {
  if (failures.length === 0) return '';
  const listed = failures.slice(0, SUMMARY_FAILURES).map((failure) => `${failure.label} ${failure.code}`);
  const more = failures.length > SUMMARY_FAILURES ? ` and ${failures.length - SUMMARY_FAILURES} more` : '';
  return `\nfailed: ${listed.join(', ')}${more}`;
}

function outcomePrinter<I, O extends OutcomeBase<I>>(job: BatchJob<I, O>, write: (outcome: O) => Promise<void>, progress: Progress) {
  const counts = Object.fromEntries(job.tally.map(([kind]) => [kind, 0])) as Record<O['kind'], number>;
  const failures: Array<{ label: string; code: string }> = [];
  // Lines are written one at a time, in the order outcomes arrive.
  let chain = Promise.resolve();
  return {
    counts: () => ({ ...counts }),
    failures: () => [...failures],
    idle: () => chain,
    print(outcome: O): Promise<void> {
      counts[outcome.kind as O['kind']] = (counts[outcome.kind as O['kind']] ?? 0) + 1;
      if (outcome.kind === 'failed') failures.push({ label: job.label(outcome.item), code: (outcome as unknown as FailedOutcome<I>).error.code });
      chain = chain.then(async () => {
        await job.settle?.(outcome);
        progress.clear();
        await write(outcome);
        progress.advance();
      });
      return chain;
    },
  };
}
