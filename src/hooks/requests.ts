import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, unlink, watch } from 'node:fs/promises';
import { join } from 'node:path';
import type { Outbox, OutboxView } from '../batch/ledgers/outbox';
import { LedgerLockedError } from '../errors';
import { acquireFileLock, liveHolder, type FileLock } from '../lib/fileLock';
import { writeFileAtomically } from '../lib/files';
import type { Clock } from '../types';

/**
 * How `hooks redeliver`, `recover` and `deliver` work beside a running watch, which holds the
 * outbox for its whole run: they put their request in the outbox's inbox, and whoever holds the
 * outbox (the watch, woken at once; or the next command or watch to open it) appends the
 * request's redeliver lines, tagged with its id, and removes the request. A request is applied
 * once: a holder that finds a request whose id the outbox already knows (a crash between the lines
 * and the removal) only removes it. Two inboxes: beside the outbox file, a directory of files
 * (`fileInbox`, here); in a shared store, a table (src/state/sharedInbox.ts), handed to whichever
 * machine holds the watch lease.
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

/** The watch that holds the outbox: its process, since when, and its machine when it may be another (a shared store). */
export interface RunningWatch {
  pid: number;
  started_at: string;
  host?: string;
}

/** The words of every message about a running watch. */
export function describeWatch(watch: RunningWatch): string {
  return `a watch is running (${watch.host === undefined ? '' : `on ${watch.host}, `}pid ${watch.pid}, since ${watch.started_at})`;
}

/** Where hooks commands leave requests for the holder of the outbox, and how that holder takes them. */
export interface HooksInbox {
  /** Puts a request in the inbox (durable, or committed, when it resolves); returns its id. */
  submit(request: HooksRequest, now: Date): Promise<string>;
  /** Whether the request is still waiting for a holder of the outbox. */
  waiting(id: string): Promise<boolean>;
  /** Takes a request back (refused before any holder took it): false when a holder has taken it, or is applying it. */
  withdraw(id: string): Promise<boolean>;
  /** Applies every request waiting, in the order they were made, to the outbox its caller holds; returns how many deliveries were made due. */
  applyAll(outbox: Outbox, at: Date): Promise<number>;
  /** Calls `wake` whenever a request lands, until `signal` aborts: a running watch applies it and sends at once rather than at its next pass. */
  onRequest(signal: AbortSignal, wake: () => void): Promise<void>;
  /** The watch that holds the outbox and takes requests, if one runs (a hooks command holding it takes none). */
  runningWatch(): Promise<RunningWatch | undefined>;
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

/** A request's id: named by time first, so that the holder applies requests in the order they were made. */
export function requestId(now: Date): string {
  return `${now.getTime().toString().padStart(15, '0')}-${randomUUID()}`;
}

/** The inbox of the outbox file at `outboxPath`: a directory beside it, one file per request, renamed into place whole. */
export function fileInbox(outboxPath: string): HooksInbox {
  const directory = inboxOf(outboxPath);
  const fileOf = (id: string) => join(directory, `${id}.json`);
  /** Whether the request's file was there for `use` (then it has read or removed it). */
  const present = async (id: string, use: (file: string) => Promise<unknown>) => {
    try {
      await use(fileOf(id));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  };
  const remove = (id: string) => present(id, unlink);
  return {
    async submit(request, now) {
      const id = requestId(now);
      await mkdir(directory, { recursive: true, mode: 0o700 });
      await writeFileAtomically(fileOf(id), `${JSON.stringify(request)}\n`, { durable: true });
      return id;
    },
    waiting: (id) => present(id, (file) => readFile(file)),
    withdraw: remove,
    async applyAll(outbox, at) {
      let names: string[];
      try {
        names = (await readdir(directory)).filter((name) => name.endsWith('.json')).sort();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
        throw error;
      }
      const requests = [];
      for (const name of names) {
        const text = await readFile(join(directory, name), 'utf8').catch(() => '');
        requests.push({ id: name.slice(0, -'.json'.length), request: parseJson(text) });
      }
      return applyInOrder(outbox, requests, at, async (id) => void (await remove(id)));
    },
    async onRequest(signal, wake) {
      await mkdir(directory, { recursive: true, mode: 0o700 });
      try {
        for await (const _change of watch(directory, { signal })) wake();
      } catch (error) {
        if ((error as Error).name !== 'AbortError') throw error;
      }
    },
    async runningWatch() {
      // On this machine: the message names no host.
      const owner = await liveHolder(watchLockOf(outboxPath));
      return owner === undefined ? undefined : { pid: owner.pid, started_at: owner.started_at };
    },
  };
}

/**
 * Applies `requests` in order to the outbox its caller holds, each once: one whose id the outbox
 * already knows (applied before a crash left it in the inbox) is only removed, through `remove`.
 * A value that is not a request (damaged by hand) is left where it is and skipped. Returns how
 * many deliveries were made due.
 */
export async function applyInOrder(outbox: Outbox, requests: ReadonlyArray<{ id: string; request: unknown }>, at: Date, remove: (id: string) => Promise<void>): Promise<number> {
  let marked = 0;
  for (const { id, request: value } of requests) {
    const request = asRequest(value);
    if (request === undefined) continue;
    if (!outbox.applied(id)) {
      const marks = [...request.marks, ...(request.retry_waiting ? waitingRetries(outbox, at) : [])];
      // Queued together: one group commit, so a request's lines reach the store together.
      await Promise.all(marks.map((mark) => outbox.redeliver(mark.id, mark.hook, at, id)));
      marked += marks.length;
    }
    await remove(id);
  }
  return marked;
}

/** Pending deliveries that were tried and wait for their next attempt. */
export function waitingRetries(outbox: OutboxView, at: Date): Mark[] {
  return [...outbox.all()].filter((delivery) => delivery.status === 'pending' && delivery.attempts > 0 && delivery.dueMs > at.getTime()).map(({ id, hook }) => ({ id, hook }));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not a request: left for a person to look at.
    return undefined;
  }
}

function asRequest(value: unknown): HooksRequest | undefined {
  const request = value as Partial<HooksRequest> | null | undefined;
  if (Array.isArray(request?.marks) && typeof request.retry_waiting === 'boolean' && request.marks.every((mark) => typeof mark?.id === 'string' && typeof mark.hook === 'string')) return request as HooksRequest;
  return undefined;
}
