import { ledgerPlaceOf } from '../../state/backend';
import { ApiError } from '../../errors';
import { createFormat, type Format } from '../../output/format';
import { palette } from '../../output/colors';
import type { Context } from '../../types';
import { LOGIN_LINKS, readLedger } from '../../batch/ledgers/loginLinks';
import type { AccountItem } from '../../batch/accountInput';
import { targetOf, type Session } from './generate';
import type { RunFlags } from './options';
import type { Decision } from './renew';

/**
 * What `login-link` says on a terminal before it acts (see `confirmBeforeActing`): who is emailed
 * and which working links stop working. The service cannot count a user's live links before
 * generating, so the statement says what this tool knows (the ledger's links that have not
 * expired) and that links made elsewhere stop working too.
 */

/** When the ledger's last link of each item's user expires, for those not expired yet (they may have been used). */
async function liveLinksKnown(session: Session, flags: RunFlags, items: readonly AccountItem[]): Promise<string[]> {
  const ledger = await readLedger((await ledgerPlaceOf(LOGIN_LINKS, session.ctx, flags)).lines);
  const now = session.ctx.clock.now().getTime();
  return items.flatMap((item) => {
    const expiresAt = ledger.findLink(targetOf(session, item))?.link.expires_at;
    return expiresAt !== undefined && Date.parse(expiresAt) > now ? [expiresAt] : [];
  });
}

function formatOf(ctx: Context): Format {
  return createFormat({ readable: true, colors: palette(false), now: ctx.clock.now() });
}

/**
 * The lines on the links that stop working, kept short for an 80-column terminal:
 * `    1 issued by taxprep, valid until 2026-12-01 10:00 UTC (in 6 days)` and what it cannot know.
 */
function stoppingLinks(users: 'this user' | 'these users', expiries: readonly string[], format: Format): string[] {
  const heading = `  - stops every earlier link of ${users} from working:`;
  if (expiries.length === 0) return [heading, '    none issued by taxprep is still valid; any made elsewhere stop too'];
  const soonest = expiries.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b));
  const until = expiries.length === 1 ? `valid until ${format.date(soonest)}` : `the first expiring ${format.date(soonest)}`;
  return [heading, `    ${expiries.length} issued by taxprep, ${until}`, '    (unless already used), and any made elsewhere'];
}

/** The email line: who gets the link, or that nobody does. */
function emailLine(flags: RunFlags, whoGetsIt: string): string {
  return flags.request.send_notification === false ? '  - sends no email (--no-notify)' : `  - emails ${whoGetsIt}`;
}

/** `login-link 1001`: names the account's holder when a question follows (one `GET /accounts/{id}`). */
export async function singleLinkStatement(session: Session, flags: RunFlags, item: AccountItem, asking: boolean): Promise<string[]> {
  const format = formatOf(session.ctx);
  const holder = item.user_email === undefined && asking ? await accountHolder(session, item.account_id) : undefined;
  const email = item.user_email ?? holder?.email;
  const user = email === undefined ? `the primary holder of account ${item.account_id}` : format.text(email);
  const live = await liveLinksKnown(session, flags, [item]);
  return [
    `This will generate a login link for account ${item.account_id}${holder ? ` (${format.name(holder.first_name, holder.last_name)})` : ''}:`,
    emailLine(flags, `it to ${user}`),
    ...stoppingLinks('this user', live, format),
  ];
}

/**
 * Several links (`login-link 1001 1002`, `--from`): one statement with counts for the whole batch;
 * "up to", since a batch that resumes its unfinished run skips the links that run made.
 */
export async function batchStatement(session: Session, flags: RunFlags, items: readonly AccountItem[]): Promise<string[] | undefined> {
  if (items.length === 0) return undefined;
  const format = formatOf(session.ctx);
  const live = await liveLinksKnown(session, flags, items);
  const shown = items.slice(0, 2).map((item) => String(item.account_id));
  const accounts = items.length > shown.length ? `${shown.join(', ')} and ${items.length - shown.length} more` : shown.join(' and ');
  return [
    `This will generate up to ${items.length} login links, for accounts ${accounts}:`,
    emailLine(flags, `each link to its user: up to ${items.length} emails`),
    ...stoppingLinks('these users', live, format),
  ];
}

/** The account's holder, or undefined when the key may not read accounts: the question is then asked without the name. */
async function accountHolder(session: Session, accountId: number) {
  try {
    return (await session.api.call('getAccount', { params: { account_id: accountId } })).data;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'INSUFFICIENT_PERMISSIONS') return undefined;
    throw error;
  }
}

const RENEWAL_REASONS: Record<Extract<Decision, { action: 'generate' }>['reason'], string> = {
  expiring: 'expiring within the window',
  expired: 'expired',
  unknown: 'unknown to the ledgers',
  uncertain: 'left uncertain by an interrupted run',
};

/** `login-link renew`: the links it would generate, by reason; undefined when it would generate none. */
export function renewalStatement(ctx: Context, flags: RunFlags, decisions: readonly Decision[]): string[] | undefined {
  const generated = decisions.flatMap((decision) => (decision.action === 'generate' ? [decision] : []));
  if (generated.length === 0) return undefined;
  const reasons = Object.entries(RENEWAL_REASONS).flatMap(([reason, words]) => {
    const count = generated.filter((decision) => decision.reason === reason).length;
    return count === 0 ? [] : [`${count} ${words}`];
  });
  const live = generated.flatMap((decision) => (decision.reason === 'expiring' && decision.expiresAt !== undefined ? [decision.expiresAt] : []));
  const unknown = generated.filter((decision) => decision.reason === 'unknown').length;
  return [
    `This will renew ${generated.length} login links:`,
    `  - ${reasons.join(', ')}`,
    ...(unknown === 0 ? [] : [`  - replaces ${unknown === 1 ? 'a link' : `${unknown} links`} taxprep cannot see (made elsewhere or earlier)`]),
    emailLine(flags, `each link to its user: ${generated.length} emails`),
    ...stoppingLinks('these users', live, formatOf(ctx)),
  ];
}
