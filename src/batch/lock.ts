import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { Clock } from '../types';
import { LedgerLockedError } from '../errors';
import type { LedgerKind } from './ledger';

/** What a lock file says about its holder. */
export interface LockOwner {
  pid: number;
  hostname: string;
  started_at: string;
}

export interface LedgerLock {
  readonly path: string;
  release(): Promise<void>;
}

const POLL_MS = 200;
/** A lock file that stays unreadable this long was left half-written by a process that died. */
const UNREADABLE_STALE_MS = 10_000;

export function lockPathOf(ledgerPath: string): string {
  return `${ledgerPath}.lock`;
}

/**
 * Takes a ledger's lock (each ledger file has its own): a file created with O_EXCL holding pid, host and start time, so two
 * overlapping runs (cron firing while the previous run is still going) never work on one ledger.
 * Waits up to `waitMs` for a live holder; a lock whose process is gone from this host is taken
 * over. A holder on another host cannot be checked, so it counts as live.
 */
export async function acquireLedgerLock(ledgerPath: string, options: { waitMs: number; clock: Clock; kind?: Pick<LedgerKind, 'label'> }): Promise<LedgerLock> {
  const path = lockPathOf(ledgerPath);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const me: LockOwner = { pid: process.pid, hostname: hostname(), started_at: options.clock.now().toISOString() };
  const mine = `${JSON.stringify(me)}\n`;
  const deadline = options.clock.now().getTime() + options.waitMs;

  for (;;) {
    if (await tryCreate(path, mine)) {
      return { path, release: () => releaseIfMine(path, mine) };
    }
    const holder = await readHolder(path);
    if (holder.state === 'stale') {
      await removeIfUnchanged(path, holder.content);
      continue;
    }
    if (holder.state === 'gone') continue;
    if (options.clock.now().getTime() >= deadline) throw lockedError(ledgerPath, path, holder.owner, options.kind);
    await options.clock.sleep(POLL_MS);
  }
}

async function tryCreate(path: string, content: string): Promise<boolean> {
  try {
    const handle = await open(path, 'wx', 0o600);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

type Holder =
  | { state: 'gone' }
  | { state: 'stale'; content: string }
  | { state: 'live'; owner: LockOwner | undefined };

async function readHolder(path: string): Promise<Holder> {
  let content: string;
  let modifiedMs: number;
  try {
    [content, modifiedMs] = await Promise.all([readFile(path, 'utf8'), stat(path).then((stats) => stats.mtimeMs)]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'gone' };
    throw error;
  }
  const owner = parseOwner(content);
  if (owner === undefined) {
    return Date.now() - modifiedMs > UNREADABLE_STALE_MS ? { state: 'stale', content } : { state: 'live', owner: undefined };
  }
  return owner.hostname === hostname() && !isProcessAlive(owner.pid) ? { state: 'stale', content } : { state: 'live', owner };
}

function parseOwner(content: string): LockOwner | undefined {
  try {
    const value = JSON.parse(content) as Partial<LockOwner>;
    if (typeof value.pid === 'number' && typeof value.hostname === 'string' && typeof value.started_at === 'string') {
      return { pid: value.pid, hostname: value.hostname, started_at: value.started_at };
    }
  } catch {
    // Half-written: the caller decides by the file's age.
  }
  return undefined;
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes a stale lock only if it still holds what we judged stale: if another run took it over
 * in between, its fresh lock stays. (The window between the read and the unlink is microseconds;
 * the worst case is two runs that both judged the same dead lock, and one of them then waits.)
 */
async function removeIfUnchanged(path: string, staleContent: string): Promise<void> {
  try {
    if ((await readFile(path, 'utf8')) === staleContent) await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

async function releaseIfMine(path: string, mine: string): Promise<void> {
  await removeIfUnchanged(path, mine);
}

function lockedError(ledgerPath: string, lockPath: string, owner: LockOwner | undefined, kind: Pick<LedgerKind, 'label'> | undefined): LedgerLockedError {
  const holder = owner === undefined ? 'another taxprep run' : `taxprep (pid ${owner.pid} on ${owner.hostname}, started ${owner.started_at})`;
  return new LedgerLockedError(`the ${kind === undefined ? '' : `${kind.label} `}ledger ${ledgerPath} is in use by ${holder}; nothing was sent`, {
    details: { ledger: ledgerPath, lock_file: lockPath, ...(owner ?? {}) },
    hint: `Let that run finish (or raise --lock-wait). If that process is gone, delete ${lockPath}.`,
  });
}
