import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, unlink, watch } from 'node:fs/promises';
import { join } from 'node:path';
import type { Outbox, OutboxView } from '../batch/ledgers/outbox';
import { LedgerLockedError } from '../errors';
import { acquireFileLock, liveHolder, type FileLock, type LockOwner } from '../lib/fileLock';
import { writeFileAtomically } from '../lib/files';
import type { Clock } from '../types';

/**
 * How `hooks redeliver`, `recover` and `deliver` work beside a running watch, which holds the
 * outbox for its whole run: they write their request into the outbox's inbox (one file each,
 * renamed into place whole), and whoever holds the outbox (the watch, woken at once; or the next
 * command or watch to open it) appends the request's redeliver lines, tagged with its id, and
 * removes the file. A request is applied once: a holder that finds a file whose id the outbox
 * already knows (a crash between the lines and the removal) only removes it. A watch also holds a
 * lock of its own, so that a command knows it is a watch that holds the outbox.
 */

/** A delivery to make due again: `<webhook-id>` for `<hook>`. */
export interface Mark {
  id: string;
  hook: string;
}

export interface HooksRequest {
  /** Deliveries to make due again, chosen by the command (redeliver, recover). */
  marks: Mark[];
  /** Also every delivery waiting for a retry, chosen by the holder when it applies the request (deliver --retry-now). */
  retry_waiting: boolean;
}

function inboxOf(outboxPath: string): string {
  return `${outboxPath}.requests`;
}

function watchLockOf(outboxPath: string): string {
  return `${outboxPath}.watch.lock`;
}

/** The words of every message about a running watch. */
export function describeWatch(owner: LockOwner): string {
  return `a watch is running (pid ${owner.pid}, since ${owner.started_at})`;
}

/** Takes the watch's own lock: one watch per profile and base URL; a second one is told which runs. */
export function acquireWatchLock(outboxPath: string, clock: Clock, waitMs: number): Promise<FileLock> {
  const path = watchLockOf(outboxPath);
  return acquireFileLock(path, {
    waitMs,
    clock,
    lockedError: (owner) =>
      new LedgerLockedError(`another watch is running${owner === undefined ? '' : ` (pid ${owner.pid}, since ${owner.started_at})`} for this profile and base URL; one watch at a time`, {
        details: { lock_file: path, ...(owner ?? {}) },
        hint: `It delivers hooks itself: hooks redeliver, recover and deliver hand it their work. If that process is gone, delete ${path}.`,
      }),
  });
}

/** The running watch of this outbox, if any. */
export function runningWatch(outboxPath: string): Promise<LockOwner | undefined> {
  return liveHolder(watchLockOf(outboxPath));
}

/** Writes a request into the inbox (whole, durable); returns its id. */
export async function submitRequest(outboxPath: string, request: HooksRequest, now: Date): Promise<string> {
  // Named by time first: the holder applies requests in the order they were made.
  const id = `${now.getTime().toString().padStart(15, '0')}-${randomUUID()}`;
  await mkdir(inboxOf(outboxPath), { recursive: true, mode: 0o700 });
  await writeFileAtomically(join(inboxOf(outboxPath), `${id}.json`), `${JSON.stringify(request)}\n`, { durable: true });
  return id;
}

/** Whether the request is still waiting for a holder of the outbox. */
export async function requestWaiting(outboxPath: string, id: string): Promise<boolean> {
  try {
    await readFile(join(inboxOf(outboxPath), `${id}.json`));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Removes a request: applied, or taken back by the command that made it (refused before any holder took it). */
export async function removeRequest(outboxPath: string, id: string): Promise<void> {
  await unlink(join(inboxOf(outboxPath), `${id}.json`)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/**
 * Applies every request of the inbox to the outbox (by its holder): returns how many deliveries
 * were made due. A file that is not a request (damaged by hand) is left where it is and skipped.
 */
export async function applyRequests(outbox: Outbox, outboxPath: string, at: Date): Promise<number> {
  let names: string[];
  try {
    names = (await readdir(inboxOf(outboxPath))).filter((name) => name.endsWith('.json')).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let marked = 0;
  for (const name of names) {
    const file = join(inboxOf(outboxPath), name);
    const id = name.slice(0, -'.json'.length);
    const request = parseRequest(await readFile(file, 'utf8').catch(() => ''));
    if (request === undefined) continue;
    if (!outbox.applied(id)) {
      const marks = [...request.marks, ...(request.retry_waiting ? waitingRetries(outbox, at) : [])];
      // Queued together: one group commit, so a request's lines reach the disk together.
      await Promise.all(marks.map((mark) => outbox.redeliver(mark.id, mark.hook, at, id)));
      marked += marks.length;
    }
    await removeRequest(outboxPath, id);
  }
  return marked;
}

/** Pending deliveries that were tried and wait for their next attempt. */
export function waitingRetries(outbox: OutboxView, at: Date): Mark[] {
  return [...outbox.all()].filter((delivery) => delivery.status === 'pending' && delivery.attempts > 0 && delivery.dueMs > at.getTime()).map(({ id, hook }) => ({ id, hook }));
}

function parseRequest(text: string): HooksRequest | undefined {
  try {
    const value = JSON.parse(text) as Partial<HooksRequest> | null;
    if (Array.isArray(value?.marks) && typeof value.retry_waiting === 'boolean' && value.marks.every((mark) => typeof mark?.id === 'string' && typeof mark.hook === 'string')) return value as HooksRequest;
  } catch {
    // Not a request: left for a person to look at.
  }
  return undefined;
}

/**
 * Calls `wake` whenever a request lands in the inbox, until `signal` aborts: a running watch
 * applies it and sends at once rather than at its next pass.
 */
export async function onRequest(outboxPath: string, signal: AbortSignal, wake: () => void): Promise<void> {
  await mkdir(inboxOf(outboxPath), { recursive: true, mode: 0o700 });
  try {
    for await (const _change of watch(inboxOf(outboxPath), { signal })) wake();
  } catch (error) {
    if ((error as Error).name !== 'AbortError') throw error;
  }
}
