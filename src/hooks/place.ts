import { withLedger, type LineStore } from '../batch/ledger';
import { OUTBOX, Outbox, defaultOutboxPath, type Delivery } from '../batch/ledgers/outbox';
import type { Context } from '../types';
import { fileInbox, type HooksInbox } from './requests';
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
   * Where `hooks redeliver`, `recover` and `deliver` hand their requests to a running watch
   * (./requests.ts): beside the outbox file, or in the shared store for the watch lease's holder.
   */
  inbox: HooksInbox;
  /** The hooks' secrets are kept with them, never in this machine's credential store: a shared store, where any machine may sign. */
  secretsWithHooks: boolean;
  /** The outbox's lines, to read (`hooks list`, `hooks deliveries`, `status`). */
  outboxLines: LineStore | string;
  /**
   * Runs `work` with the outbox open for writing, the requests of its inbox applied first: under
   * the file's lock, or under the watch lease taken for the run (held by a watch or another hooks
   * command: exit 10; `handOver` hands a watch the work instead). `claim` is the shared store's
   * claim of each attempt (see `DelivererOptions.claim`).
   */
  withOutbox<T>(work: (outbox: Outbox, claim?: (delivery: Delivery, attempt: number) => Promise<void>) => Promise<T>): Promise<T>;
}

/** How long `hooks deliver` and the others wait for the outbox another hooks command holds (then exit 10). */
export const OUTBOX_WAIT_MS = 2_000;

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
  const inbox = fileInbox(outboxPath);
  const open = (lines: LineStore) => openTakingRequests(lines, inbox, ctx.clock.now());
  return {
    scope,
    store: hooksFile(hooksPath),
    where: `insecure file ${hooksPath}`,
    inbox,
    secretsWithHooks: false,
    outboxLines: outboxPath,
    withOutbox: (work) => withLedger(outboxPath, OUTBOX, { waitMs: OUTBOX_WAIT_MS, clock: ctx.clock, open }, (outbox) => work(outbox)),
  };
}

/** Opens an outbox for writing, and first takes the requests that a watch which stopped did not take. */
export async function openTakingRequests(lines: LineStore | string, inbox: HooksInbox, at: Date): Promise<Outbox> {
  const outbox = await Outbox.open(lines);
  try {
    await inbox.applyAll(outbox, at);
  } catch (error) {
    await outbox.close();
    throw error;
  }
  return outbox;
}
