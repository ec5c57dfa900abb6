import type { ApiClient, ApiResponse } from '../../api/types';
import type { TolerantResponseOf } from '../../api/tolerant';
import type { Context } from '../../types';
import { ApiError, CliError, MissingCredentialsError, NetworkError, UsageError } from '../../errors';
import type { LoginLinkItem } from './lib/input';
import { RateLimitPacer } from './lib/pacer';
import { Ledger, type LinkTarget } from './lib/ledgerStore';
import { acquireLedgerLock } from './lib/ledgerLock';
import { keepOutputPrivate } from './lib/privateOutput';
import { ledgerPathOf } from './lib/ledgerPaths';
import { definedOnly } from '../parseFlags';
import type { LinkRequestDefaults, RunFlags } from './options';

/** What one item of a run came to. */
export type Outcome =
  | { kind: 'issued'; item: LoginLinkItem; response: ApiResponse<TolerantResponseOf<'createLoginLink'>> }
  | { kind: 'failed'; item: LoginLinkItem; error: CliError }
  | { kind: 'skipped'; item: LoginLinkItem; reason: SkipReason; expiresAt?: string };

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

export function targetOf(session: Pick<Session, 'origin'>, item: LoginLinkItem): LinkTarget {
  return { origin: session.origin, account_id: item.account_id, user_email: item.user_email ?? null };
}

/** Runs `work` with the ledger open and its lock held; the lock is released whatever happens. */
export async function withLedger<T>(ctx: Context, flags: RunFlags, work: (ledger: Ledger) => Promise<T>): Promise<T> {
  const path = ledgerPathOf(ctx, flags);
  const lock = await acquireLedgerLock(path, { waitMs: flags.lockWaitMs, clock: ctx.clock }).catch((error: unknown) => {
    throw unusableLedger(path, error);
  });
  try {
    const ledger = await Ledger.open(path).catch((error: unknown) => {
      throw unusableLedger(path, error);
    });
    try {
      return await work(ledger);
    } finally {
      await ledger.close();
    }
  } finally {
    await lock.release();
  }
}

/** A ledger that cannot be created or written (permissions, a read-only disk) is a local setting to fix. */
function unusableLedger(path: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (error instanceof CliError || typeof code !== 'string') return error;
  return new UsageError(`cannot use the login-link ledger ${path} (${code}); nothing was sent`, {
    hint: 'Pass --ledger PATH to keep it somewhere writable, or fix the directory permissions.',
  });
}

/**
 * A failure that no later item can escape: the key is refused or out of quota, or the service
 * cannot be reached. The batch stops starting items and exits with the failure's own code.
 */
export function isGlobalFailure(error: unknown): boolean {
  if (error instanceof NetworkError || error instanceof MissingCredentialsError) return true;
  return error instanceof ApiError && ['INVALID_API_KEY', 'EXPIRED_API_KEY', 'INSUFFICIENT_PERMISSIONS', 'RATE_LIMIT_EXCEEDED'].includes(error.code);
}

/** The body for one item: the run's flags, then what the item's own line sets. */
export function requestBody(defaults: LinkRequestDefaults, item: LoginLinkItem): LinkRequestDefaults {
  return { ...defaults, ...definedOnly({ user_email: item.user_email, purpose: item.purpose, expiry_hours: item.expiry_hours }) };
}

/** Whether a failed request provably made no link: the service answered 4xx, or never got it. */
export function madeNoLink(error: unknown): boolean {
  if (error instanceof ApiError) return error.status < 500;
  return error instanceof NetworkError && !error.mayHaveReachedService;
}

/**
 * Generates one link with the ledger kept exact: the intent is on disk before the request leaves,
 * and the answer after it arrives. An intent is settled when the service provably made nothing;
 * a timeout, a reset, a 5xx or an unreadable 2xx leave it open, since a link may exist.
 */
export async function generateLink(
  session: Session,
  ledger: Ledger,
  item: LoginLinkItem,
  body: LinkRequestDefaults,
  options: { run?: string; pacer?: RateLimitPacer; signal?: AbortSignal },
): Promise<ApiResponse<TolerantResponseOf<'createLoginLink'>>> {
  const target = targetOf(session, item);
  const sequence = await options.pacer?.acquire(options.signal);
  const meta = () => ({ profile: session.profile, ...(options.run ? { run: options.run } : {}), at: session.ctx.clock.now() });
  let intent: string;
  let response: ApiResponse<TolerantResponseOf<'createLoginLink'>>;
  try {
    intent = await ledger.recordIntent(target, meta());
    try {
      response = await session.api.call('createLoginLink', { params: { account_id: item.account_id }, body });
    } catch (error) {
      if (madeNoLink(error)) await ledger.recordRefused(intent, target, (error as CliError).code, meta());
      throw error;
    }
  } catch (error) {
    if (sequence !== undefined) options.pacer!.release(sequence);
    throw error;
  }
  const record = response.data;
  if (sequence !== undefined) options.pacer!.record(sequence, response.headers, Date.parse(record.created_at ?? ''));
  // The contract promises these fields; a service that leaves one out still issued the link.
  const issued = {
    user_email: record.user_email ?? item.user_email ?? '',
    purpose: record.purpose ?? body.purpose ?? '',
    expires_at: record.expires_at ?? '',
    created_at: record.created_at ?? session.ctx.clock.now().toISOString(),
  };
  await ledger.recordIssued(intent, target, issued, meta());
  return response;
}
