import type { Context } from '../../types';
import type { LoginLinkItem } from './input';
import { UsageError } from '../../errors';
import { LOGIN_LINKS, readLedger, type LedgerView } from '../../batch/ledgers/loginLinks';
import { createOutput } from '../../output';
import { writeText } from '../../output/write';
import { definedOnly } from '../parseFlags';
import type { RawInvocation } from '../types';
import { inputOf, runLinkBatch, uncertainError, type BatchPlan } from './batch';
import { ledgerPathOf } from '../../batch/ledger';
import { renewalNow } from './renewalNow';
import { readItems } from './create';
import { openSession, targetOf, withLedger } from './generate';
import { parseRunFlags, parseWindow, type RunFlags } from './options';
import { DEFAULT_WINDOW, renew } from './register';

export interface RenewOptions extends RunFlags {
  from: string;
  withinMs: number;
  dryRun: boolean;
}

export function parseOptions(raw: RawInvocation): RenewOptions {
  if (typeof raw.flags.from !== 'string') throw new UsageError('--from FILE is required: the accounts whose links to keep valid (- for stdin)', { details: { '--from': ['is required'] } });
  const flags = parseRunFlags(renew.flags!, raw.flags);
  return { ...flags, from: raw.flags.from, withinMs: parseWindow(raw.flags.within ?? DEFAULT_WINDOW, '--within'), dryRun: raw.flags.dryRun === true };
}

/** What renewal does with one item, and why. */
export type Decision =
  | { action: 'generate'; reason: 'unknown' | 'expired' | 'expiring' | 'uncertain'; expiresAt?: string }
  | { action: 'skip'; reason: 'fresh'; expiresAt: string }
  | { action: 'hold'; reason: 'uncertain'; intentAt: string };

/**
 * A link is renewed when the ledger does not know it, or it expires within the window from `now`.
 * An unanswered intent is held back (see `uncertainError`) unless `reissueUncertain`.
 */
export function decide(ledger: LedgerView, origin: string, item: LoginLinkItem, now: Date, withinMs: number, reissueUncertain: boolean): Decision {
  const target = targetOf({ origin }, item);
  const intent = ledger.uncertainIntent(target);
  if (intent) return reissueUncertain ? { action: 'generate', reason: 'uncertain' } : { action: 'hold', reason: 'uncertain', intentAt: intent.at };
  const known = ledger.findLink(target);
  if (!known) return { action: 'generate', reason: 'unknown' };
  const expiresAt = known.link.expires_at;
  const expiresMs = Date.parse(expiresAt);
  if (expiresMs <= now.getTime()) return { action: 'generate', reason: 'expired', expiresAt };
  if (expiresMs <= now.getTime() + withinMs) return { action: 'generate', reason: 'expiring', expiresAt };
  return { action: 'skip', reason: 'fresh', expiresAt };
}

export async function run(ctx: Context, options: RenewOptions): Promise<number> {
  const items = await readItems(ctx, options.from);
  const now = renewalNow(ctx);
  if (options.dryRun) {
    const settings = await ctx.settings();
    const ledger = await readLedger(ledgerPathOf(LOGIN_LINKS, ctx, options));
    const origin = new URL(settings.baseUrl).origin;
    await printPlan(ctx, items.map((item) => ({ item, decision: decide(ledger, origin, item, now, options.withinMs, options.reissueUncertain) })));
    return 0;
  }
  const session = await openSession(ctx);
  return withLedger(ctx, options, (ledger) => {
    const plan: BatchPlan = { send: [], settled: [] };
    for (const item of items) {
      const decision = decide(ledger, session.origin, item, now, options.withinMs, options.reissueUncertain);
      if (decision.action === 'generate') plan.send.push(item);
      else if (decision.action === 'skip') plan.settled.push({ kind: 'skipped', item, reason: 'fresh', expiresAt: decision.expiresAt });
      else plan.settled.push({ kind: 'failed', item, error: uncertainError(item, decision.intentAt) });
    }
    return runLinkBatch(session, ledger, plan, options);
  });
}

async function printPlan(ctx: Context, planned: Array<{ item: LoginLinkItem; decision: Decision }>): Promise<void> {
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
  await out.note(`dry run: ${counts.generate} to generate, ${counts.skip} fresh, ${counts.hold} uncertain; nothing was sent`);
}
