import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';

/**
 * The one lock of the project: a file created with O_EXCL holding its holder's pid, host and start
 * time. The ledgers (`src/batch/lock.ts`) and the mock's data directory (`src/mock/persistence.ts`)
 * both take it, so that two processes never work on one ledger or one data directory. Low-level
 * code: it imports nothing of the client or of the mock, and each caller words its own refusal.
 */

/** What a lock file says about its holder. */
export interface LockOwner {
  pid: number;
  hostname: string;
  started_at: string;
}

export interface FileLock {
  readonly path: string;
  release(): Promise<void>;
}

/** The time a lock waits by: the commands' clock (tests move it), or the real one. */
export interface LockClock {
  now(): Date;
  sleep(ms: number): Promise<void>;
}

export const REAL_LOCK_CLOCK: LockClock = { now: () => new Date(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

const POLL_MS = 200;
/** A lock file that stays unreadable this long was left half-written by a process that died. */
const UNREADABLE_STALE_MS = 10_000;

/**
 * Takes the lock at `path`. Waits up to `waitMs` for a live holder, then throws what `lockedError`
 * makes of it (the owner is undefined while the holder has created the file but not yet written
 * it: that holder is alive and counts as one). A lock whose process is gone from this host is
 * taken over. A holder on another host cannot be checked, so it counts as live.
 */
export async function acquireFileLock(
  path: string,
  options: { waitMs: number; clock: LockClock; lockedError: (owner: LockOwner | undefined) => Error },
): Promise<FileLock> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const me: LockOwner = { pid: process.pid, hostname: hostname(), started_at: options.clock.now().toISOString() };
  const mine = `${JSON.stringify(me)}\n`;
  const deadline = options.clock.now().getTime() + options.waitMs;

  for (;;) {
    if (await tryCreate(path, mine)) {
      return { path, release: () => removeIfUnchanged(path, mine) };
    }
    const holder = await readHolder(path);
    if (holder.state === 'stale') {
      await removeIfUnchanged(path, holder.content);
      continue;
    }
    if (holder.state === 'gone') continue;
    if (options.clock.now().getTime() >= deadline) throw options.lockedError(holder.owner);
    await options.clock.sleep(POLL_MS);
  }
}

/** Who holds the lock at `path` now, if a live process does (a stale or half-written lock holds nothing). */
export async function liveHolder(path: string): Promise<LockOwner | undefined> {
  const holder = await readHolder(path);
  return holder.state === 'live' ? holder.owner : undefined;
}

async function tryCreate(path: string, content: string): Promise<boolean> {
  try {
    const handle = await open(path, 'wx', 0o600);
    try {
      // Not flushed to the disk: a lock speaks only for a live process, and none outlives a power cut
      // (a lock file left empty by one is taken over once it is 10 s old). A flush per start costs
      // more than a mock's whole start-up on a busy disk.
      await handle.writeFile(content);
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
    const value = JSON.parse(content) as Partial<LockOwner> | null;
    if (typeof value?.pid === 'number' && typeof value.hostname === 'string' && typeof value.started_at === 'string') {
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
 * Removes a lock only if it still holds what we judged stale (or wrote ourselves): if another
 * process took it over in between, its fresh lock stays. (The window between the read and the
 * unlink is microseconds; the worst case is two processes that both judged the same dead lock, and
 * one of them then waits.)
 */
async function removeIfUnchanged(path: string, expected: string): Promise<void> {
  try {
    if ((await readFile(path, 'utf8')) === expected) await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
