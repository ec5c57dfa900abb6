import { ledgerPlaceOf } from '../../state/backend';
import type { ApiClient, ApiResponse } from '../../api/types';
import type { TolerantResponseOf } from '../../api/tolerant';
import type { Context } from '../../types';
import type { CliError } from '../../errors';
import type { AccountItem } from '../../batch/accountInput';
import type { RateLimitPacer } from '../../batch/pacer';
import { Ledger, LOGIN_LINKS, type LinkTarget } from '../../batch/ledgers/loginLinks';
import { withLedger as withLedgerOf } from '../../batch/ledger';
import { keepOutputPrivate } from '../../batch/privateFiles';
import { sendTracked } from '../../batch/send';
import { definedOnly } from '../parseFlags';
import type { LinkRequestDefaults, RunFlags } from './options';

/** What one item of a run came to. */
export type Outcome =
  | { kind: 'issued'; item: AccountItem; response: ApiResponse<TolerantResponseOf<'createLoginLink'>> }
  | { kind: 'failed'; item: AccountItem; error: CliError }
  | { kind: 'skipped'; item: AccountItem; reason: SkipReason; expiresAt?: string };

/**
 * Why an item was not sent: its link is `fresh` (renewal), or the unfinished run of the same
 * batch that this one resumes already generated it (`done_in_interrupted_run`).
 */
export type SkipReason = 'fresh' | 'done_in_interrupted_run';

/** Where links go and who asks: the service origin and profile, as the ledger records them. */
export interface Session {
  ctx: Context;
  api: ApiClient;
  origin: string;
  profile: string | null;
}

/** Opens a session that generates links: what stdout gets will hold them (see `keepOutputPrivate`). */
export async function openSession(ctx: Context): Promise<Session> {
  keepOutputPrivate(ctx.io.stdout);
  const [settings, api] = await Promise.all([ctx.settings(), ctx.api()]);
  return { ctx, api, origin: new URL(settings.baseUrl).origin, profile: settings.profileName };
}

export function targetOf(session: Pick<Session, 'origin'>, item: AccountItem): LinkTarget {
  return { origin: session.origin, account_id: item.account_id, user_email: item.user_email ?? null };
}

/** Runs `work` with the login-link ledger open and its lock held; the lock is released whatever happens. */
export async function withLedger<T>(ctx: Context, flags: RunFlags, work: (ledger: Ledger) => Promise<T>): Promise<T> {
  return withLedgerOf(await ledgerPlaceOf(LOGIN_LINKS, ctx, flags), LOGIN_LINKS, { waitMs: flags.lockWaitMs, clock: ctx.clock, open: (lines) => Ledger.open(lines) }, work);
}

/** The body for one item: the run's flags, then what the item's own line sets. */
export function requestBody(defaults: LinkRequestDefaults, item: AccountItem): LinkRequestDefaults {
  return { ...defaults, ...definedOnly({ user_email: item.user_email, purpose: item.purpose, expiry_hours: item.expiry_hours }) };
}

/**
 * Generates one link with the ledger kept exact: the intent is on disk before the request leaves,
 * and the answer after it arrives. An intent is settled when the service provably made nothing;
 * a timeout, a reset, a 5xx or an unreadable 2xx leave it open, since a link may exist.
 */
export async function generateLink(
  session: Session,
  ledger: Ledger,
  item: AccountItem,
  body: LinkRequestDefaults,
  options: { run?: string; pacer?: RateLimitPacer; signal?: AbortSignal },
): Promise<ApiResponse<TolerantResponseOf<'createLoginLink'>>> {
  const target = targetOf(session, item);
  const meta = () => ({ profile: session.profile, ...(options.run ? { run: options.run } : {}), at: session.ctx.clock.now() });
  const { response } = await sendTracked(
    {
      recordIntent: () => ledger.recordIntent(target, meta()),
      send: () => session.api.call('createLoginLink', { params: { account_id: item.account_id }, body }),
      recordRefused: (id, error: CliError) => ledger.recordRefused(id, target, error.code, meta()),
      recordDone: (id, answer) => {
        const record = answer.data;
        // The contract promises these fields; a service that leaves one out still issued the link.
        const issued = {
          user_email: record.user_email ?? item.user_email ?? '',
          purpose: record.purpose ?? body.purpose ?? '',
          expires_at: record.expires_at ?? '',
          created_at: record.created_at ?? session.ctx.clock.now().toISOString(),
        };
        return ledger.recordIssued(id, target, issued, meta());
      },
      serviceNow: (answer) => Date.parse(answer.data.created_at ?? ''),
    },
    options,
  );
  return response;
}
