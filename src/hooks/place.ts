import { LedgerLockedError } from '../errors';
import { withLedger, type LineStore } from '../batch/ledger';
import { OUTBOX, Outbox, defaultOutboxPath, type Delivery } from '../batch/ledgers/outbox';
import { DEFAULT_LEASE_MS, keepLease, newHolder, releaseLease, takeLease } from '../follow/lease';
import { sharedHooks } from '../state/sharedHooks';
import { claimAttempt, sharedOutboxLines } from '../state/sharedOutbox';
import { teamScopeOf, teamSqlOf } from '../state/teamSql';
import type { Context } from '../types';
import { defaultHooksPath, hooksFile, type HooksStore, type Scope } from './store';

/**
 * Where the hooks of a command are, and its outbox: the hooks file and the outbox file of the
 * profile and base URL, or, with a shared store, the namespace's hooks and outbox in it (there a
 * hook belongs to the namespace and base URL, whatever the machine's profile is called: its scope's
 * profile is null).
 */
export interface HooksPlace {
  scope: Scope;
  store: HooksStore;
  /** The outbox's lines, to read (`hooks list`, `hooks deliveries`, `status`). */
  outboxLines: LineStore | string;
  /**
   * Runs `work` with the outbox open for writing: under the file's lock, or under the watch lease
   * taken for the run (a watch holding it: exit 10, as beside a running watch on one machine).
   * `claim` is the shared store's claim of each attempt (see `DelivererOptions.claim`).
   */
  withOutbox<T>(work: (outbox: Outbox, claim?: (delivery: Delivery, attempt: number) => Promise<void>) => Promise<T>): Promise<T>;
}

/** How long `hooks deliver` and the others wait for the outbox a running watch holds (exit 10). */
const OUTBOX_WAIT_MS = 2_000;
/** The lease a hooks command takes for its run: a watch's default, so a standby watch takes over as soon after its death. */
const OUTBOX_LEASE_MS = DEFAULT_LEASE_MS;

export async function hooksPlaceOf(ctx: Context): Promise<HooksPlace> {
  const settings = await ctx.settings();
  const shared = (await ctx.state()).shared;
  if (shared === undefined) {
    const scope = { profile: settings.profileName, baseUrl: settings.baseUrl };
    const outboxPath = defaultOutboxPath(ctx.env, scope.profile, scope.baseUrl);
    return {
      scope,
      store: hooksFile(defaultHooksPath(ctx.env)),
      outboxLines: outboxPath,
      withOutbox: (work) => withLedger(outboxPath, OUTBOX, { waitMs: OUTBOX_WAIT_MS, clock: ctx.clock, open: Outbox.open }, (outbox) => work(outbox)),
    };
  }
  const sql = teamSqlOf(shared);
  const team = teamScopeOf(shared);
  return {
    scope: { profile: null, baseUrl: settings.baseUrl },
    store: sharedHooks(sql, team),
    outboxLines: sharedOutboxLines(sql, team, shared.describe, undefined),
    async withOutbox(work) {
      const taken = await takeLease(sql, team, newHolder(), OUTBOX_LEASE_MS);
      if (!taken.taken) {
        const { host, pid } = taken.current.holder;
        throw new LedgerLockedError(`the webhook outbox of ${shared.describe} is in use by the watch on ${host} (pid ${pid}); nothing was sent`, {
          details: { store: shared.describe, host, pid },
          hint: 'That watch delivers what is due itself; stop it first to run this command.',
        });
      }
      const { lease } = taken;
      // Renewed for as long as the command runs (`hooks deliver --wait`); lost, its next write is refused (exit 10).
      const keeper = keepLease(sql, team, lease, OUTBOX_LEASE_MS, ctx.clock, () => undefined);
      try {
        const outbox = await Outbox.open(sharedOutboxLines(sql, team, shared.describe, lease));
        try {
          return await work(outbox, (delivery, attempt) => claimAttempt(sql, team, lease, delivery, attempt));
        } finally {
          await outbox.close();
        }
      } finally {
        keeper.stop();
        await releaseLease(sql, team, lease).catch(() => undefined);
      }
    },
  };
}
