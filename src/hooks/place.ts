import { withLedger, type LineStore } from '../batch/ledger';
import { OUTBOX, Outbox, defaultOutboxPath, type Delivery } from '../batch/ledgers/outbox';
import type { Context } from '../types';
import { applyRequests } from './requests';
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
  /** Where the hooks keep secrets not in the credential store, in words: the insecure file, or the shared store. */
  where: string;
  /**
   * The outbox file whose inbox (./requests.ts) hands `hooks redeliver`, `recover` and `deliver`
   * requests to a running watch. Absent in a shared store, whose commands take the lease instead.
   */
  inbox?: string;
  /** The hooks' secrets are kept with them, never in this machine's credential store: a shared store, where any machine may sign. */
  secretsWithHooks: boolean;
  /** The outbox's lines, to read (`hooks list`, `hooks deliveries`, `status`). */
  outboxLines: LineStore | string;
  /**
   * Runs `work` with the outbox open for writing: under the file's lock, or under the watch lease
   * taken for the run (a watch holding it: exit 10, as beside a running watch on one machine).
   * `claim` is the shared store's claim of each attempt (see `DelivererOptions.claim`).
   */
  withOutbox<T>(work: (outbox: Outbox, claim?: (delivery: Delivery, attempt: number) => Promise<void>) => Promise<T>): Promise<T>;
}

/** How long `hooks deliver` and the others wait for the outbox file a running watch holds (exit 10). */
const OUTBOX_WAIT_MS = 2_000;

export async function hooksPlaceOf(ctx: Context): Promise<HooksPlace> {
  const settings = await ctx.settings();
  const shared = (await ctx.state()).shared;
  if (shared === undefined) {
    const scope = { profile: settings.profileName, baseUrl: settings.baseUrl };
    return fileHooksPlace(ctx, scope, { hooks: defaultHooksPath(ctx.env), outbox: defaultOutboxPath(ctx.env, scope.profile, scope.baseUrl) });
  }
  // Loaded only with a shared store: a command on files never loads the database client.
  const { sharedHooksPlace } = await import('../state/sharedHooksPlace');
  return sharedHooksPlace(ctx, shared, settings.baseUrl);
}

/** The hooks file and outbox file at `paths` (`state export --to DIR` names its own). */
export function fileHooksPlace(ctx: Pick<Context, 'clock'>, scope: Scope, paths: { hooks: string; outbox: string }): HooksPlace {
  const { hooks: hooksPath, outbox: outboxPath } = paths;
  // Opened for writing, the outbox first takes the requests a watch that stopped did not take.
  const open = async (lines: LineStore) => {
    const outbox = await Outbox.open(lines);
    try {
      await applyRequests(outbox, outboxPath, ctx.clock.now());
    } catch (error) {
      await outbox.close();
      throw error;
    }
    return outbox;
  };
  return {
    scope,
    store: hooksFile(hooksPath),
    where: `insecure file ${hooksPath}`,
    inbox: outboxPath,
    secretsWithHooks: false,
    outboxLines: outboxPath,
    withOutbox: (work) => withLedger(outboxPath, OUTBOX, { waitMs: OUTBOX_WAIT_MS, clock: ctx.clock, open }, (outbox) => work(outbox)),
  };
}
