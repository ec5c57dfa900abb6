import { EXIT, UsageError } from '../../errors';
import { durationRule, formatDuration, parseDuration } from '../../lib/duration';
import { DEFAULT_LEASE_MS, MAX_LEASE_MS, MIN_LEASE_MS } from '../../follow/lease';
import { createOutput, type Output } from '../../output';
import { createStatusLine } from '../../output/statusLine';
import { sanitizeLine } from '../../output/sanitize';
import { addOrigin, describeSources, gatherAccounts, type AccountSources } from '../../follow/accounts';
import { applyObservations } from '../../follow/changes';
import { printChanges } from '../../follow/print';
import { isPassingTrouble, runPass, type PassResult } from '../../follow/pass';
import { allowedAgainAt, changeBoundMs, formatBudget, fullLookRequests, parseBudget, passRequests, planTasks, DEFAULT_BUDGET, type Budget, type Task } from '../../follow/planner';
import { defaultStatePath, freshState, readState, stagePass, type PassRecord, type WatchState } from '../../follow/state';
import { crashPoint } from '../../lib/crashPoints';
import { openWatchHooks, watchHooksFiles, type WatchHooks, type WatchHooksPlace } from '../../hooks/watchHooks';
import type { StagedFile } from '../../lib/files';
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
  /** With a shared store: how long the watch lease lasts without a renewal (src/follow/lease.ts). */
  leaseMs: number;
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
    leaseMs: typeof flags.lease === 'string' ? parseLease(flags.lease) : DEFAULT_LEASE_MS,
  };
}

const LEASE_RULE = `must be ${durationRule()}, from ${formatDuration(MIN_LEASE_MS)} to ${formatDuration(MAX_LEASE_MS)}`;

function parseLease(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < MIN_LEASE_MS || ms > MAX_LEASE_MS) throw new UsageError(`--lease ${LEASE_RULE}`, { details: { '--lease': [LEASE_RULE] } });
  return ms;
}

/**
 * `taxprep watch`: passes that each read what the budget allows (see src/follow/), compare it
 * with the last look and print only the changes, then record them as seen (`printAndRecord`):
 * every change is printed at least once, and a kill between a print and its commit repeats that
 * pass's changes once.
 */
export async function run(ctx: Context, options: WatchOptions): Promise<number> {
  const settings = await ctx.settings();
  const api = await ctx.api();
  const scope = { profile: settings.profileName, baseUrl: settings.baseUrl };
  const shared = (await ctx.state()).shared;
  if (shared !== undefined) {
    if (options.statePath !== undefined) {
      throw new UsageError(`--state names a file, and the watch state is in the shared store ${shared.describe}`, {
        details: { '--state': ['cannot be used with a shared store'] },
        hint: 'Leave --state out: every machine of the namespace shares one watch state.',
      });
    }
    const { watchAsTeam } = await import('./team');
    const { teamScopeOf, teamSqlOf } = await import('../../state/teamSql');
    const code = await watchAsTeam(ctx, options, { api, settings, sql: teamSqlOf(shared), team: teamScopeOf(shared), storeName: shared.describe });
    if (code === EXIT.INTERRUPTED) await createOutput(ctx).note(`watch: stopped; every change printed is recorded in ${shared.describe}`);
    return code;
  }
  const statePath = options.statePath ?? defaultStatePath(ctx.env, settings.profileName, settings.baseUrl);
  const place: WatchPlace = {
    where: statePath,
    read: (reset) => readState(statePath, { baseUrl: settings.baseUrl }, { reset }),
    stage: (record) => stagePass(statePath, record),
    hooks: watchHooksFiles(ctx, scope),
  };
  const code = await watchFrom(ctx, options, { api, settings, place, signal: ctx.interrupted() });
  if (code === EXIT.INTERRUPTED) await createOutput(ctx).note(`watch: stopped; every change printed is recorded in ${statePath}`);
  return code;
}

/** Where a watch keeps its state and finds its hooks and outbox: files, or a shared store under the lease (./team.ts). */
export interface WatchPlace {
  /** Where every change printed is recorded, for the message of a watch stopped by Ctrl-C. */
  where: string;
  read(reset: boolean): Promise<WatchState | undefined>;
  stage(record: PassRecord): Promise<StagedFile>;
  hooks: WatchHooksPlace;
}

/**
 * A watch from `place`'s last look until `signal` (Ctrl-C, or under a shared store the lease
 * lost) or, with --once, one pass.
 */
export async function watchFrom(ctx: Context, options: WatchOptions, { api, settings, place, signal }: { api: ApiClient; settings: ResolvedSettings; place: WatchPlace; signal: AbortSignal }): Promise<number> {
  const scope = { profile: settings.profileName, baseUrl: settings.baseUrl };
  const saved = await place.read(options.resetState);
  const hooks = await openWatchHooks(ctx, scope, place.hooks, (message) => createOutput(ctx).note(message), { background: !options.once, signal, recordedPass: saved?.outbox_pass });
  let finished = false;
  try {
    const code = await watchPasses(ctx, options, { api, place, saved, settings, hooks, signal });
    // A --once run that read nothing still sends what is due: only Ctrl-C leaves it for the next run.
    finished = code !== EXIT.INTERRUPTED;
    return code;
  } finally {
    // --once sends what is due before it exits; a stopped watch leaves it for the next run.
    await hooks.close({ sweep: finished && options.once });
  }
}

async function watchPasses(
  ctx: Context,
  options: WatchOptions,
  { api, place, saved, settings, hooks, signal }: { api: ApiClient; place: WatchPlace; saved: WatchState | undefined; settings: ResolvedSettings; hooks: WatchHooks; signal: AbortSignal },
): Promise<number> {
  const sources = await gatherAccounts(ctx, { accountsFile: options.accountsFile, loginLinksLedger: options.ledgerPath, baseUrl: settings.baseUrl });
  let state: WatchState = saved ?? freshState(settings.baseUrl, settings.profileName, ctx.clock.now());
  // The first look is a baseline: recorded, not reported (unless --initial asks for it).
  let baseline = saved === undefined && !options.initial;
  const budget = { ...options.budget };
  const sentAt = state.sent.map(Date.parse).filter(Number.isFinite);
  // What a person is told (a terminal, or --verbose); a pipe and cron hear only of changes.
  const tellsPerson = ctx.io.stderrIsTTY || ctx.globals.verbose;
  const coverageLine = createStatusLine(ctx.io.stderr, ctx.io.stderrIsTTY && !ctx.globals.verbose, ctx.io.columns);
  // Each message and print gets an output made at that moment: its relative times ("2 minutes ago") are as of then.
  const note = async (message: string) => {
    coverageLine.end();
    await createOutput(ctx).note(message);
  };
  const followed = () => [...sources.origins.keys()].filter((account) => !(account in state.unknown_accounts));
  let notedKeyLimit = false;

  if (tellsPerson) await note(opening(state, followed(), sources, options, baseline || saved === undefined, budget));
  for (;;) {
    let pass: PassResult;
    try {
      const accounts = followed();
      const maxRequests = options.once ? budget.requests : passRequests(fullLookRequests(state.snapshot, accounts), budget);
      pass = await runPass({ api, clock: ctx.clock, snapshot: state.snapshot, accounts, budget, sentAt, waitForSlots: !options.once, maxRequests, signal });
    } catch (error) {
      if (signal.aborted) return EXIT.INTERRUPTED;
      if (options.once || !isPassingTrouble(error)) throw error;
      await note(`watch: this pass failed (${sanitizeLine(error.message)}); trying again within ${formatDuration(budget.windowMs / budget.requests)}`);
      try {
        await ctx.clock.sleep(budget.windowMs / budget.requests, signal);
      } catch {
        return EXIT.INTERRUPTED;
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
    if (changes.length > 0) coverageLine.end();
    // Queued for the hooks first, under a pass the state names: recorded as seen by the same rename.
    const outboxPass = await hooks.queue(changes);
    state = { ...state, outbox_pass: outboxPass };
    await printAndRecord(createOutput(ctx), ctx.globals.json, place, { state, changes });
    await hooks.committed(outboxPass);
    // After the first pass, what is read for the first time is still recorded, not reported (see applyObservations).
    baseline = false;

    for (const [account, code] of newlyUnknown) {
      const line = sources.fileLines.get(account);
      await note(`warning: account ${account}${line === undefined ? '' : ` (${line})`}: ${code}; it is left out from now on (--reset-state to try it again)`);
    }
    // The key's limit is read as the contract's, per minute, and scaled to the budget's window.
    const keyAllows = pass.keyLimit === undefined ? undefined : Math.max(1, Math.floor((pass.keyLimit * budget.windowMs) / 60_000));
    if (keyAllows !== undefined && keyAllows < budget.requests && !notedKeyLimit) {
      notedKeyLimit = true;
      budget.requests = keyAllows;
      await note(`watch: the key allows ${pass.keyLimit} requests a minute; budget lowered to ${formatBudget(budget)}`);
    }
    if (pass.rateLimited !== undefined) {
      budget.requests = Math.max(1, Math.floor(budget.requests / 2));
      await note(`watch: the service answered 429 (${pass.rateLimited.code}); pace lowered to ${formatBudget(budget)}`);
    }
    // A --once run that read nothing says so wherever it runs (in cron "no change" and "did not
    // look" must differ) and exits 6; a long watch's person is told why a pass read nothing.
    const readNothing = pass.requests === 0;
    if (readNothing && (tellsPerson || options.once)) {
      const againAt = new Date(allowedAgainAt(budget, sentAt, ctx.clock.now().getTime())).toISOString();
      await note(`watch: nothing was read: the budget of ${formatBudget(budget)} is spent by requests of the last ${formatDuration(budget.windowMs)}; it allows the next at ${againAt}`);
    }
    // Cron mails whatever is printed: a quiet --once run in a pipe prints nothing, coverage
    // included; with changes from part of a look, the coverage says how much was read.
    if (tellsPerson || (options.once && changes.length > 0 && pass.requests < fullLookRequests(state.snapshot, followed()))) {
      const line = coverage(state, followed(), pass, budget, ctx.clock.now());
      if (ctx.io.stderrIsTTY && !ctx.globals.verbose && !options.once) coverageLine.show(line);
      else await note(line);
    }
    if (options.once) return readNothing ? EXIT.RATE_LIMITED : EXIT.OK;
  }
}

/**
 * A pass's changes printed, then recorded as seen by the one durable step of src/follow/state.ts
 * (`stagePass`, or its shared store's `stageSharedPass`). Printed first: a kill before the commit loses nothing (the next run finds the
 * same changes) and a kill between the print and the commit repeats them once.
 */
async function printAndRecord(out: Output, json: boolean, place: WatchPlace, record: PassRecord): Promise<void> {
  const staged = await place.stage(record);
  crashPoint('watch.before-print');
  await printChanges(out, json, record.changes);
  crashPoint('watch.after-print');
  await staged.commit();
  crashPoint('watch.after-commit');
}

/** What a watch on a terminal is about to do: a baseline or a look for changes, over how many accounts, within what bound, and how to stop it. */
function opening(state: WatchState, accounts: number[], sources: AccountSources, options: WatchOptions, first: boolean, budget: Budget): string {
  const fullLook = fullLookRequests(state.snapshot, accounts);
  const what = first
    ? options.initial
      ? 'a first look, reporting everything it finds'
      : 'recording a baseline (what is read for the first time is recorded, not reported; then changes)'
    : 'looking for changes since the last look';
  const over = `${describeSources(sources, options.accountsFile)}${sources.origins.size === 0 || first ? ', and those the deliverable list names' : ''}`;
  // Before the accounts' lists were read their projects are not known, nor the bound: the pass lines say it then.
  const unlisted = planTasks(state.snapshot, accounts).some((task) => task.kind === 'projects' && task.readAt === '');
  const bound = unlisted
    ? `budget ${formatBudget(budget)}; a full look is ${fullLook} requests and one per project, and the bound on how soon a change is reported follows from it`
    : `budget ${formatBudget(budget)}; a full look is ${fullLook} request${fullLook === 1 ? '' : 's'}, so every change is reported within ${formatDuration(changeBoundMs(fullLook, budget))} of happening${options.once ? ' (with runs that use the budget)' : ''}`;
  return `watch: ${what}, over ${over}; ${bound}. ${options.once ? 'One pass.' : 'Ctrl-C stops it.'}`;
}

/** What a pass read, and how complete and fresh the look now is: the counts add up to the full look. */
function coverage(state: WatchState, accounts: number[], pass: PassResult, budget: Budget, now: Date): string {
  const { observations } = pass;
  const tasks = planTasks(state.snapshot, accounts);
  const fullLook = fullLookRequests(state.snapshot, accounts);
  const unread = fullLook - tasks.filter((task) => task.readAt !== '').length;
  const oldest = tasks.find((task) => task.readAt !== '');
  const read = [
    counted(observations.deliverablePagesRead?.length ?? 0, 'deliverable page'),
    counted(observations.projectLists.length + pass.unknownAccounts.size, 'project list'),
    counted(observations.projectStatuses.length + pass.goneProjects.length, 'project status', 'project statuses'),
  ].filter((part) => !part.startsWith('0 '));
  const age = oldest === undefined ? '' : `, oldest ${formatDuration(Math.max(0, now.getTime() - Date.parse(oldest.readAt)))} old (${describeTask(oldest)})`;
  // Most telling first: a line rewritten in place is cut at the terminal's width.
  return (
    `watch: full look ${fullLook} requests, ${unread === 0 ? 'all read' : `${fullLook - unread} read, ${unread} not yet`}${age}; ` +
    `changes within ${formatDuration(changeBoundMs(fullLook, budget))} at ${formatBudget(budget)}; ` +
    `this pass read ${counted(pass.requests, 'request')}${read.length === 0 ? '' : ` (${read.join(', ')})`}`
  );
}

function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}

function describeTask(task: Task): string {
  if (task.kind === 'deliverables') return `the deliverable list${task.page === 0 ? '' : `, page ${task.page + 1}`}`;
  return task.kind === 'projects' ? `account ${task.account_id}'s project list` : `project ${task.project_id}'s status`;
}
