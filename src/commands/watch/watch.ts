import { EXIT } from '../../errors';
import { formatDuration } from '../../lib/duration';
import { createOutput, type Output } from '../../output';
import { sanitizeLine } from '../../output/sanitize';
import { addOrigin, describeSources, gatherAccounts, type AccountSources } from '../../follow/accounts';
import { applyObservations } from '../../follow/changes';
import { printChanges } from '../../follow/print';
import { isPassingTrouble, runPass, type PassResult } from '../../follow/pass';
import { accountReadAt, formatBudget, parseBudget, DEFAULT_BUDGET, type Budget } from '../../follow/planner';
import { defaultStatePath, freshState, readState, stagePass, type PassRecord, type WatchState } from '../../follow/state';
import { crashPoint } from '../../lib/crashPoints';
import { openWatchHooks, type WatchHooks } from '../../hooks/watchHooks';
import type { ApiClient } from '../../api/types';
import type { Context, ResolvedSettings } from '../../types';
import type { RawInvocation } from '../types';

export interface WatchOptions {
  once: boolean;
  budget: Budget;
  accountsFile: string | undefined;
  ledgerPath: string | undefined;
  statePath: string | undefined;
  resetState: boolean;
  initial: boolean;
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function parseOptions(raw: RawInvocation): WatchOptions {
  const { flags } = raw;
  return {
    once: flags.once === true,
    budget: typeof flags.budget === 'string' ? parseBudget(flags.budget) : DEFAULT_BUDGET,
    accountsFile: text(flags.accounts),
    ledgerPath: text(flags.ledger),
    statePath: text(flags.state),
    resetState: flags.resetState === true,
    initial: flags.initial === true,
  };
}

/**
 * `taxprep watch`: passes that each read what the budget allows (see src/follow/), compare it
 * with the last look and print only the changes, then record them as seen (`printAndRecord`):
 * every change is printed at least once, and a kill between a print and its commit repeats that
 * pass's changes once.
 */
export async function run(ctx: Context, options: WatchOptions): Promise<number> {
  const out = createOutput(ctx);
  const settings = await ctx.settings();
  const api = await ctx.api();
  const statePath = options.statePath ?? defaultStatePath(ctx.env, settings.profileName, settings.baseUrl);
  const saved = await readState(statePath, { baseUrl: settings.baseUrl }, { reset: options.resetState });
  const hooks = await openWatchHooks(ctx, { profile: settings.profileName, baseUrl: settings.baseUrl }, (message) => out.note(message), { background: !options.once, signal: ctx.interrupted() });
  let finished = false;
  try {
    const code = await watchPasses(ctx, options, { out, api, statePath, saved, settings, hooks });
    finished = code === EXIT.OK;
    return code;
  } finally {
    // --once sends what is due before it exits; a stopped watch leaves it for the next run.
    await hooks.close({ sweep: finished && options.once });
  }
}

async function watchPasses(
  ctx: Context,
  options: WatchOptions,
  { out, api, statePath, saved, settings, hooks }: { out: Output; api: ApiClient; statePath: string; saved: WatchState | undefined; settings: ResolvedSettings; hooks: WatchHooks },
): Promise<number> {
  const sources = await gatherAccounts(ctx, { accountsFile: options.accountsFile, loginLinksLedger: options.ledgerPath, baseUrl: settings.baseUrl });
  let state: WatchState = saved ?? freshState(settings.baseUrl, settings.profileName, ctx.clock.now());
  // The first look is a baseline: recorded, not reported (unless --initial asks for it).
  let baseline = saved === undefined && !options.initial;
  const budget = { ...options.budget };
  const sentAt = state.sent.map(Date.parse).filter(Number.isFinite);
  const signal = ctx.interrupted();
  let notedKeyLimit = false;
  // The look a pass's changes are found against names their webhook ids (src/hooks/queue.ts).
  let look = saved?.saved_at ?? 'first look';

  for (;;) {
    let pass: PassResult;
    try {
      const accounts = [...sources.origins.keys()].filter((account) => !(account in state.unknown_accounts));
      pass = await runPass({ api, clock: ctx.clock, snapshot: state.snapshot, accounts, budget, sentAt, waitForSlots: !options.once, signal });
    } catch (error) {
      if (signal.aborted) return stopped(out, statePath);
      if (options.once || !isPassingTrouble(error)) throw error;
      await out.note(`watch: this pass failed (${sanitizeLine(error.message)}); trying again within ${formatDuration(budget.windowMs / budget.requests)}`);
      try {
        await ctx.clock.sleep(budget.windowMs / budget.requests, signal);
      } catch {
        return stopped(out, statePath);
      }
      continue;
    }
    const seenAt = ctx.clock.now().toISOString();
    for (const account of pass.deliverableAccounts) addOrigin(sources, account, 'deliverables');
    const { after, changes } = applyObservations(state.snapshot, pass.observations, seenAt, { baseline, initial: options.initial });
    for (const project of pass.goneProjects) delete after.projects[project];
    const newlyUnknown = [...pass.unknownAccounts].filter(([account]) => !(account in state.unknown_accounts));
    state = {
      ...state,
      saved_at: seenAt,
      snapshot: after,
      sent: sentAt.filter((at) => at > Date.parse(seenAt) - budget.windowMs).map((at) => new Date(at).toISOString()),
      unknown_accounts: { ...state.unknown_accounts, ...Object.fromEntries(newlyUnknown.map(([account, code]) => [String(account), code])) },
    };
    await hooks.queue(changes, look);
    await printAndRecord(out, ctx.globals.json, statePath, { state, changes });
    look = state.saved_at;
    baseline = false;

    for (const [account, code] of newlyUnknown) {
      const line = sources.fileLines.get(account);
      await out.note(`warning: account ${account}${line === undefined ? '' : ` (${line})`}: ${code}; it is left out from now on (--reset-state to try it again)`);
    }
    // The key's limit is read as the contract's, per minute, and scaled to the budget's window.
    const keyAllows = pass.keyLimit === undefined ? undefined : Math.max(1, Math.floor((pass.keyLimit * budget.windowMs) / 60_000));
    if (keyAllows !== undefined && keyAllows < budget.requests && !notedKeyLimit) {
      notedKeyLimit = true;
      budget.requests = keyAllows;
      await out.note(`watch: the key allows ${pass.keyLimit} requests a minute; budget lowered to ${formatBudget(budget)}`);
    }
    if (pass.rateLimited !== undefined) {
      budget.requests = Math.max(1, Math.floor(budget.requests / 2));
      await out.note(`watch: the service answered 429 (${pass.rateLimited.code}); pace lowered to ${formatBudget(budget)}`);
    }
    // Cron mails whatever is printed: a quiet --once run prints nothing, freshness included, but a
    // person who runs it twice in a minute is told why the second run read nothing.
    if (pass.requests === 0 && ctx.io.stderrIsTTY) {
      await out.note(`watch: the budget of ${formatBudget(budget)} is spent by requests of the last ${formatDuration(budget.windowMs)}; nothing was read`);
    }
    if (pass.tasksLeft > 0 && (!options.once || changes.length > 0)) await out.note(freshness(state, sources, pass, options.accountsFile, ctx.clock.now(), budget));
    if (options.once) return EXIT.OK;
  }
}

/**
 * A pass's changes printed, then recorded as seen by the one durable step of src/follow/state.ts
 * (`stagePass`). Printed first: a kill before the commit loses nothing (the next run finds the
 * same changes) and a kill between the print and the commit repeats them once.
 */
async function printAndRecord(out: Output, json: boolean, statePath: string, record: PassRecord): Promise<void> {
  const staged = await stagePass(statePath, record);
  crashPoint('watch.before-print');
  await printChanges(out, json, record.changes);
  crashPoint('watch.after-print');
  await staged.commit();
  crashPoint('watch.after-commit');
}

async function stopped(out: Output, statePath: string): Promise<number> {
  await out.note(`watch: stopped; every change printed is recorded in ${statePath}`);
  return EXIT.INTERRUPTED;
}

/** How fresh the look is when a pass could not cover it all: how many accounts, and the oldest data. */
function freshness(state: WatchState, sources: AccountSources, pass: PassResult, accountsFile: string | undefined, now: Date, budget: Budget): string {
  const accounts = [...sources.origins.keys()].filter((account) => !(account in state.unknown_accounts));
  const readAt = accounts.map((account) => ({ account, at: accountReadAt(state.snapshot, account) }));
  const unread = readAt.filter(({ at }) => at === undefined);
  const read = readAt.filter((entry): entry is { account: number; at: string } => entry.at !== undefined).sort((a, b) => a.at.localeCompare(b.at));
  const oldest = read[0];
  // Accounts never listed have projects not planned yet: as many, guessed, as the listed ones have.
  const listed = Object.values(state.snapshot.accounts).filter((account) => account.listed_at !== undefined).length;
  const neverListed = accounts.filter((account) => state.snapshot.accounts[account]?.listed_at === undefined).length;
  const projectsPerAccount = listed === 0 ? 0 : Object.keys(state.snapshot.projects).length / listed;
  const passes = Math.ceil((pass.tasksLeft + neverListed * projectsPerAccount) / budget.requests);
  return (
    `watch: this pass sent ${pass.requests} request${pass.requests === 1 ? '' : 's'} (budget ${formatBudget(budget)}) and could not cover everything: ` +
    `${describeSources(sources, accountsFile)}; ${read.length} read in full, ${unread.length} not yet` +
    (oldest === undefined ? '' : `; the oldest data is ${formatDuration(now.getTime() - Date.parse(oldest.at))} old (account ${oldest.account})`) +
    `; about ${passes} more pass${passes === 1 ? '' : 'es'} to read the rest`
  );
}
