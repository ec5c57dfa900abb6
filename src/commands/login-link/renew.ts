import { ledgerPlaceOf } from '../../state/backend';
import type { Context } from '../../types';
import { readAccountInputLines, type AccountItem, type CheckedInput } from '../../batch/accountInput';
import { badRowsError, sourceName } from '../../batch/input';
import { CliError, EXIT, UsageError } from '../../errors';
import { LOGIN_LINKS, readLedger, type LedgerView } from '../../batch/ledgers/loginLinks';
import { createOutput } from '../../output';
import { writeText } from '../../output/write';
import { definedOnly } from '../parseFlags';
import type { RawInvocation } from '../types';
import { confirmBeforeActing, willAsk } from '../confirmation';
import { inputOf, runLinkBatch, uncertainError, type BatchPlan } from './batch';
import { ACCOUNTS, readAccountsLedger } from '../../batch/ledgers/accounts';
import { CREATION_LINK_LIFETIME_MS } from '../../contract/vocabulary';
import { renewalNow } from './renewalNow';
import { renewalStatement } from './confirm';
import { openSession, targetOf, withLedger } from './generate';
import { parseRunFlags, parseWindow, type RunFlags } from './options';
import { DEFAULT_WINDOW, renew } from './register';

export interface RenewOptions extends RunFlags {
  from: string;
  withinMs: number;
  dryRun: boolean;
  /** `--renew-unknown`: also replace links the ledger cannot see, without a person saying yes at the terminal. */
  renewUnknown: boolean;
  /** `--skip-invalid`: renew from the good lines of `--from`, reporting the bad ones (exit 9). */
  skipInvalid: boolean;
}

export function parseOptions(raw: RawInvocation): RenewOptions {
  if (typeof raw.flags.from !== 'string') throw new UsageError('--from FILE is required: the accounts whose links to keep valid (- for stdin)', { details: { '--from': ['is required'] } });
  const flags = parseRunFlags(renew.flags!, raw.flags);
  return {
    ...flags,
    from: raw.flags.from,
    withinMs: parseWindow(raw.flags.within ?? DEFAULT_WINDOW, '--within'),
    dryRun: raw.flags.dryRun === true,
    renewUnknown: raw.flags.renewUnknown === true,
    skipInvalid: raw.flags.skipInvalid === true,
  };
}

/** What renewal does with one item, and why. */
export type Decision =
  | { action: 'generate'; reason: 'unknown' | 'expired' | 'expiring' | 'uncertain'; expiresAt?: string }
  | { action: 'skip'; reason: 'fresh'; expiresAt: string }
  | { action: 'hold'; reason: 'uncertain'; intentAt: string }
  /** A link the ledgers cannot see, not to be replaced: nobody said yes, nor --renew-unknown. */
  | { action: 'hold'; reason: 'unknown' };

/** What renewal may do without asking: send again an unanswered intent, replace a link nobody here can see. */
export interface RenewalPolicy {
  reissueUncertain: boolean;
  renewUnknown: boolean;
}

/** What renewal knows: the login-link ledger, and when the accounts ledger saw this tool create each account. */
export interface RenewalKnowledge {
  links: LedgerView;
  /** `origin|account_id` -> when `accounts create` or `accounts import` made the account. */
  createdAt: Map<string, string>;
}

/** The login-link ledger and the creations of the accounts ledger, read without their locks. */
export async function renewalKnowledge(ctx: Context, options: RunFlags, links?: LedgerView): Promise<RenewalKnowledge> {
  const [linkLedger, accounts] = await Promise.all([links ?? ledgerPlaceOf(LOGIN_LINKS, ctx, options).then((place) => readLedger(place.lines)), ledgerPlaceOf(ACCOUNTS, ctx, { ledgerPath: undefined }).then((place) => readAccountsLedger(place.lines))]);
  const createdAt = new Map<string, string>();
  for (const entry of accounts.accounts()) if (entry.type === 'created') createdAt.set(`${entry.origin}|${entry.account_id}`, entry.at);
  return { links: linkLedger, createdAt };
}

/**
 * The expiry of the primary holder's link handed out at creation, for an account this tool created
 * before creation links entered the login-link ledger: creation time plus the contract's 7 days.
 */
function creationLinkExpiry(knowledge: RenewalKnowledge, origin: string, item: AccountItem): string | undefined {
  if (item.user_email !== undefined) return undefined;
  const created = knowledge.createdAt.get(`${origin}|${item.account_id}`);
  return created === undefined ? undefined : new Date(Date.parse(created) + CREATION_LINK_LIFETIME_MS).toISOString();
}

/**
 * A link is renewed when it expires within the window from `now`, or when the ledgers know
 * nothing of it (`unknown`: its current link, if any, cannot be seen) and `renewUnknown` (see
 * `run` for who may say so). An unanswered intent is held back (see `uncertainError`) unless
 * `reissueUncertain`. The one decision of the dry run, the terminal's question and the run.
 */
export function decide(knowledge: RenewalKnowledge, origin: string, item: AccountItem, now: Date, withinMs: number, policy: RenewalPolicy): Decision {
  const target = targetOf({ origin }, item);
  const intent = knowledge.links.uncertainIntent(target);
  if (intent) return policy.reissueUncertain ? { action: 'generate', reason: 'uncertain' } : { action: 'hold', reason: 'uncertain', intentAt: intent.at };
  const expiresAt = knowledge.links.findLink(target)?.link.expires_at ?? creationLinkExpiry(knowledge, origin, item);
  if (expiresAt === undefined) return policy.renewUnknown ? { action: 'generate', reason: 'unknown' } : { action: 'hold', reason: 'unknown' };
  const expiresMs = Date.parse(expiresAt);
  if (expiresMs <= now.getTime()) return { action: 'generate', reason: 'expired', expiresAt };
  if (expiresMs <= now.getTime() + withinMs) return { action: 'generate', reason: 'expiring', expiresAt };
  return { action: 'skip', reason: 'fresh', expiresAt };
}

export async function run(ctx: Context, options: RenewOptions): Promise<number> {
  const items = await readRenewalItems(ctx, options);
  const skippedLines = items.problems.length > 0;
  const exitCode = await renewItems(ctx, options, items.items);
  // The bad lines' users got no renewal: the run is not a success, as the import that skipped them was not.
  return exitCode === EXIT.OK && skippedLines && !options.dryRun ? EXIT.PARTIAL : exitCode;
}

/** `--from`'s items; with --skip-invalid its bad lines are said on stderr (each line and rule) and left out. */
async function readRenewalItems(ctx: Context, options: RenewOptions): Promise<CheckedInput> {
  const read = await readAccountInputLines(ctx, options.from, '--from', async () => (await ctx.settings()).baseUrl);
  if (read.problems.length === 0) return read;
  const source = sourceName(options.from);
  if (!options.skipInvalid) throw badRowsError(source, read.problems, read.badLines, { hint: 'Fix those lines, or pass --skip-invalid to renew from the good ones (after an import with --skip-invalid, its --results file holds only the good ones).' });
  await createOutput(ctx).note(`warning: ${source} has ${read.badLines} bad line${read.badLines === 1 ? '' : 's'}, left out (--skip-invalid):\n  ${read.problems.join('\n  ')}`);
  return read;
}

async function renewItems(ctx: Context, options: RenewOptions, items: AccountItem[]): Promise<number> {
  const now = renewalNow(ctx);
  if (options.dryRun) {
    const settings = await ctx.settings();
    // As the run would: a terminal asks before replacing unknown links (planned as generated, with a note), a pipe leaves them alone.
    const asks = willAsk(ctx, options.yes);
    await printPlan(ctx, options, asks, await planRenewal(ctx, options, new URL(settings.baseUrl).origin, items, now, options.renewUnknown || asks));
    return 0;
  }
  const session = await openSession(ctx);
  // One question for the whole run, before the ledger's lock is taken; the plan is made again under the lock.
  const answeredYes = await confirmBeforeActing(ctx, options.yes, async () => {
    const planned = await planRenewal(ctx, options, session.origin, items, now, true);
    return renewalStatement(ctx, options, planned.map(({ decision }) => decision));
  });
  // Replacing a link nobody here can see takes a person's yes at the terminal, or --renew-unknown (--yes is not enough).
  const policy = { reissueUncertain: options.reissueUncertain, renewUnknown: options.renewUnknown || answeredYes };
  return withLedger(ctx, options, async (ledger) => {
    const knowledge = await renewalKnowledge(ctx, options, ledger);
    const plan: BatchPlan = { send: [], settled: [] };
    for (const item of items) {
      const decision = decide(knowledge, session.origin, item, now, options.withinMs, policy);
      if (decision.action === 'generate') plan.send.push(item);
      else if (decision.action === 'skip') plan.settled.push({ kind: 'skipped', item, reason: 'fresh', expiresAt: decision.expiresAt });
      else plan.settled.push({ kind: 'failed', item, error: decision.reason === 'unknown' ? unknownLinkError(item) : uncertainError(item, decision.intentAt) });
    }
    const exitCode = await runLinkBatch(session, ledger, plan, options);
    const unknown = plan.settled.flatMap((outcome) => (outcome.kind === 'failed' && outcome.error instanceof UnknownLinkError ? [outcome.item.account_id] : []));
    // Said after the summary, so that the mail of a cron run says what to do, not only the code.
    if (unknown.length > 0) await createOutput(ctx).note(unknownNote(unknown, false));
    return exitCode;
  });
}

/** What renewal would do with each item, read from the ledger without its lock (a dry run, the terminal's question). */
async function planRenewal(ctx: Context, options: RenewOptions, origin: string, items: AccountItem[], now: Date, renewUnknown: boolean) {
  const knowledge = await renewalKnowledge(ctx, options);
  const policy = { reissueUncertain: options.reissueUncertain, renewUnknown };
  return items.map((item) => ({ item, decision: decide(knowledge, origin, item, now, options.withinMs, policy) }));
}

async function printPlan(ctx: Context, options: RenewOptions, asks: boolean, planned: Array<{ item: AccountItem; decision: Decision }>): Promise<void> {
  const out = createOutput(ctx);
  const counts = { generate: 0, skip: 0, hold: 0 };
  for (const { item, decision } of planned) {
    counts[decision.action] += 1;
    const expiresAt = 'expiresAt' in decision ? decision.expiresAt : undefined;
    if (ctx.globals.json) {
      await out.ndjson({ input: inputOf(item), plan: definedOnly({ action: decision.action, reason: decision.reason, expires_at: expiresAt }) });
      continue;
    }
    const expires = expiresAt === undefined ? '' : out.forPeople ? `expires ${out.format.date(expiresAt)}` : expiresAt;
    const cells = [decision.action, String(item.account_id), item.user_email ?? '-', decision.reason, expires].filter((cell) => cell !== '');
    await writeText(ctx.io.stdout, `${cells.join(out.forPeople ? '  ' : '\t')}\n`);
  }
  const held = planned.filter(({ decision }) => decision.action === 'hold');
  const unknown = planned.filter(({ decision }) => decision.reason === 'unknown').map(({ item }) => item.account_id);
  const heldUnknown = held.filter(({ decision }) => decision.reason === 'unknown').length;
  await out.note(`dry run: ${counts.generate} to generate, ${counts.skip} fresh, ${held.length - heldUnknown} uncertain${heldUnknown === 0 ? '' : `, ${heldUnknown} unknown left alone`}; nothing was sent`);
  if (unknown.length > 0) await out.note(unknownNote(unknown, options.renewUnknown, asks));
}

/**
 * The dry run's word on `unknown` items: a real run replaces a link it cannot see (one handed out
 * elsewhere, or before this machine kept a ledger), so it asks first, or needs --renew-unknown.
 */
function unknownNote(accounts: readonly number[], renewUnknown: boolean, asks = false): string {
  const shown = accounts.slice(0, MAX_NAMED_UNKNOWN).join(', ');
  const more = accounts.length > MAX_NAMED_UNKNOWN ? ` and ${accounts.length - MAX_NAMED_UNKNOWN} more` : '';
  const who = `${accounts.length} account${accounts.length === 1 ? '' : 's'} unknown to the ledgers (${shown}${more})`;
  if (renewUnknown) return `${who}: their current links, which taxprep cannot see, would be replaced and stop working.`;
  if (asks) return `${who}: renewing would replace links taxprep cannot see; the run asks first (in a pipe it needs --renew-unknown).`;
  return `${who}: renewing would replace links taxprep cannot see; on a terminal it asks first, in a pipe it needs --renew-unknown.`;
}

/** How many unknown accounts the dry run's note names before counting the rest. */
const MAX_NAMED_UNKNOWN = 10;

/** A link the ledgers know nothing of, left alone: nobody said to replace it. */
export class UnknownLinkError extends CliError {
  readonly exitCode = EXIT.PARTIAL;
  readonly code = 'LINK_UNKNOWN';
}

function unknownLinkError(item: AccountItem): UnknownLinkError {
  return new UnknownLinkError('the ledgers know no link for this user, so its current link (if any) cannot be seen; it was not replaced', {
    details: { account_id: item.account_id },
    hint: 'Check with `taxprep login-link renew --dry-run`, then re-run with --renew-unknown to replace those links.',
  });
}
