import { randomUUID } from 'node:crypto';
import { acquireLedgerLock } from '../batch/lock';
import { OUTBOX, Outbox, defaultOutboxPath, type Delivery } from '../batch/ledgers/outbox';
import type { Change } from '../follow/changes';
import { crashPoint } from '../lib/crashPoints';
import { sanitizeLine } from '../output/sanitize';
import type { Clock, Context } from '../types';
import { Deliverer } from './deliverer';
import { eventsFor } from './queue';
import { acquireWatchLock, fileInbox, type HooksInbox } from './requests';
import { defaultHooksPath, hooksFile, inScope, type HooksStore, type Scope } from './store';

/** How long watch waits for the watch's lock (another watch runs) and the outbox's (a hooks command holds it) before exit 10. */
const LOCK_WAIT_MS = 2_000;

/**
 * What `watch` does for hooks: it holds the watch's lock and the outbox's for its whole run (one
 * watch per profile and base URL: a second one exits 10), applies the requests `hooks redeliver`,
 * `recover` and `deliver` hand it (./requests.ts) as they come, queues each pass's changes for
 * every enabled matching hook under the pass's id before the state that names that pass is
 * recorded, marks the pass committed
 * after, and delivers as deliveries fall due (a running watch in the background, `--once` before
 * it exits).
 */
export interface WatchHooks {
  /** Queues a pass's changes, durable when it resolves; returns the pass id the state must name (`outbox_pass`). */
  queue(changes: readonly Change[]): Promise<string | undefined>;
  /** The state naming `pass` is recorded (undefined: a pass that queued nothing): its changes may be sent. */
  committed(pass: string | undefined): Promise<void>;
  /** Stops delivering (after a last sweep with `--once`), closes the outbox and releases the lock. */
  close(options: { sweep: boolean }): Promise<void>;
}

/** The outbox a watch writes, open, and how to let it go (the file's lock, or nothing under a shared store's lease). */
export interface OpenedOutbox {
  outbox: Outbox;
  release(): Promise<void>;
  /** See `DelivererOptions.claim`. */
  claim?: (delivery: Delivery, attempt: number) => Promise<void>;
  /**
   * Where the requests of `hooks redeliver`, `recover` and `deliver` wait for this watch while it
   * holds the outbox (./requests.ts): beside the outbox file, or in the shared store.
   */
  inbox: HooksInbox;
}

/** Where a watch finds its hooks, and how it opens the outbox for writing. */
export interface WatchHooksPlace {
  hooks: HooksStore;
  openOutbox(): Promise<OpenedOutbox>;
}

/**
 * The hooks file and the outbox file of this profile and base URL: the watch's own lock first (a
 * second watch is told another is running), then the outbox's.
 */
export function watchHooksFiles(ctx: Pick<Context, 'env' | 'clock'>, scope: Scope): WatchHooksPlace {
  const outboxPath = defaultOutboxPath(ctx.env, scope.profile, scope.baseUrl);
  return {
    hooks: hooksFile(defaultHooksPath(ctx.env)),
    async openOutbox() {
      const watchLock = await acquireWatchLock(outboxPath, ctx.clock, LOCK_WAIT_MS);
      let lock: Awaited<ReturnType<typeof acquireLedgerLock>> | undefined;
      try {
        lock = await acquireLedgerLock(outboxPath, { waitMs: LOCK_WAIT_MS, clock: ctx.clock, kind: OUTBOX });
        const release = async () => {
          await lock?.release();
          await watchLock.release();
        };
        return { outbox: await Outbox.open(outboxPath), release, inbox: fileInbox(outboxPath) };
      } catch (error) {
        await lock?.release();
        await watchLock.release();
        throw error;
      }
    },
  };
}

export async function openWatchHooks(
  ctx: Pick<Context, 'clock' | 'credentials' | 'trust'>,
  scope: Scope,
  where: WatchHooksPlace,
  note: (message: string) => Promise<void>,
  options: { background: boolean; signal: AbortSignal; recordedPass: string | undefined },
): Promise<WatchHooks> {
  const { hooks: hooksStore } = where;
  // Read first: damaged hooks stop watch before it reads or records anything (exit 2).
  await hooksStore.read();
  const trust = await ctx.trust();
  const { outbox, release, claim, inbox } = await where.openOutbox();
  try {
    // A watch killed between queueing a pass and recording it: the state says whether it was recorded.
    for (const pass of outbox.unsettledPasses()) await outbox.settlePass(pass, pass === options.recordedPass ? 'committed' : 'dropped', ctx.clock.now());
  } catch (error) {
    await outbox.close();
    await release();
    throw error;
  }
  const deliverer = new Deliverer({ outbox, hooks: hooksStore, scope, clock: ctx.clock, note, claim, credentials: ctx.credentials(), trust });
  const stop = new AbortController();
  const stopping = AbortSignal.any([stop.signal, options.signal]);
  let wake = new AbortController();
  const wakeSender = () => {
    wake.abort();
    wake = new AbortController();
  };
  // One application at a time: two that read the same request would both apply it.
  let applying = Promise.resolve();
  const takeRequests = () => {
    applying = applying.catch(() => undefined).then(async () => void (await inbox.applyAll(outbox, ctx.clock.now())));
    return applying;
  };
  // A request is applied as it lands, even while a sweep is sending (a mark on a delivery in
  // flight is taken by that attempt's outcome), and wakes the sender to send it at once.
  const onRequestLanded = () => {
    takeRequests().then(wakeSender, (error: unknown) => note(`hooks: a request of hooks redeliver, recover or deliver was not applied (${sanitizeLine((error as Error).message)}); it waits for the next pass`));
  };
  const watchInbox = () =>
    inbox.onRequest(stopping, onRequestLanded).catch((error: unknown) => note(`hooks: requests of hooks redeliver, recover and deliver are taken at each pass only (${sanitizeLine((error as Error).message)})`));
  const background = options.background ? Promise.all([deliverInBackground(deliverer, ctx.clock, stopping, () => wake.signal, takeRequests, note), watchInbox()]) : Promise.resolve();

  return {
    async queue(changes) {
      const hooks = (await hooksStore.read()).filter((hook) => hook.enabled && inScope(hook, scope));
      const events = eventsFor(changes, hooks, randomUUID(), ctx.clock.now()).filter((event) => event.hooks.length > 0);
      if (events.length === 0) return undefined;
      await outbox.queue(events);
      crashPoint('hooks.after-queue');
      return events[0]!.pass;
    },
    async committed(pass) {
      if (pass !== undefined) await outbox.settlePass(pass, 'committed', ctx.clock.now());
      // Every pass wakes the sender: new deliveries, or a hook added or enabled since.
      wakeSender();
    },
    async close({ sweep }) {
      stop.abort();
      try {
        await background;
        if (sweep) {
          await takeRequests();
          await deliverer.sweep(options.signal);
        }
      } finally {
        await applying.catch(() => undefined);
        await deliverer.close();
        await outbox.close();
        await release();
      }
    },
  };
}

/**
 * Sends what falls due until stopped, after applying the requests handed in: woken by each pass
 * and each request, else asleep until the next due time.
 */
async function deliverInBackground(
  deliverer: Deliverer,
  clock: Clock,
  signal: AbortSignal,
  wakeSignal: () => AbortSignal,
  takeRequests: () => Promise<void>,
  note: (message: string) => Promise<void>,
): Promise<void> {
  while (!signal.aborted) {
    // Taken before the sweep: a pass or a request that comes during it wakes the next round at once.
    const woken = wakeSignal();
    let waitMs: number | undefined;
    try {
      await takeRequests();
      const { nextDueMs } = await deliverer.sweep(signal);
      waitMs = nextDueMs === undefined ? undefined : Math.max(0, nextDueMs - clock.now().getTime());
    } catch (error) {
      if (signal.aborted) return;
      await note(`hooks: delivery paused (${sanitizeLine((error as Error).message)}); trying again at the next pass`);
    }
    const until = AbortSignal.any([signal, woken]);
    // Nothing due later: only the next pass (or the end) wakes it, so an idle watch sets no timer.
    if (waitMs === undefined) await new Promise((resolve) => (until.aborted ? resolve(undefined) : until.addEventListener('abort', resolve, { once: true })));
    else await clock.sleep(waitMs, until).catch(() => undefined);
  }
}
