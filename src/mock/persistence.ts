import { access, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { crashPoint } from '../lib/crashPoints';
import { acquireFileLock, REAL_LOCK_CLOCK } from '../lib/fileLock';
import { TEMPORARY_SUFFIX } from '../lib/files';
import { ignoreMissing } from './blobStore';
import { trackState, type TrackedState } from './changes';
import { JOURNAL_FILE, JournalDamage, openJournal, replayJournal, startJournal, type JournalWriter } from './journal';
import { readSnapshot, ScalarsSchema, SNAPSHOT_FILE, SnapshotDamage, snapshotLines, stageSnapshot } from './snapshot';
import type { MockState } from './state';

/**
 * A data directory (`serve --mock --data-dir DIR`) on disk: the snapshot (`DIR/state.snapshot`,
 * `src/mock/snapshot.ts`) and the journal that continues it (`DIR/state.journal`,
 * `src/mock/journal.ts`). A write appends the changes it made to the journal and is acknowledged
 * once they are flushed; start-up reads the snapshot and replays the journal.
 *
 * `DIR/state.json` is the whole-state file of the mock before the journal: found on start-up, it
 * is converted once (read and checked as before, written as a snapshot) and renamed to
 * `DIR/state.json.bak`, kept as the backup of the conversion.
 */

export const STATE_FILE = 'state.json';
export const STATE_BACKUP_FILE = 'state.json.bak';
const STATE_FORMAT = 'taxprep-mock-state';
const STATE_VERSION = 1;

/** The data directory cannot be used as it is: the message names the file and what is wrong. */
export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirError';
  }
}

/** A file of the data directory that cannot be read (not damaged: unreadable, such as a directory in its place). */
const cannotRead = (path: string, error: unknown) => new DataDirError(`${path}: cannot read the saved state (${error instanceof Error ? error.message : String(error)})`);

const records = z.array(z.record(z.string(), z.unknown()));

// The shape, not every field rule: enough to refuse a damaged or hand-edited file before it is used.
const StateFileSchema = z.object({
  state: z.object({
    partners: records,
    apiKeys: records,
    accounts: records,
    users: records,
    loginLinks: records,
    documents: records,
    projects: records,
    outstandingItems: records,
    deliverables: records,
    outbox: records,
    ...ScalarsSchema.shape,
  }),
});

/** The state of a `state.json`, or undefined when the directory has none. */
async function readStateFile(directory: string): Promise<MockState | undefined> {
  const path = join(directory, STATE_FILE);
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw cannotRead(path, error);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new DataDirError(`${path}: a damaged state file (invalid JSON); move it away or choose another --data-dir`);
  }
  const refuse = (what: string) => new DataDirError(`${path}: ${what}; move it away or choose another --data-dir`);
  const header = (json ?? {}) as { format?: unknown; version?: unknown };
  if (header.format !== STATE_FORMAT) throw refuse('not a state file of the taxprep mock');
  if (header.version !== STATE_VERSION) {
    throw refuse(`written by another version of the mock (state format ${String(header.version)}, this one reads ${STATE_VERSION})`);
  }
  const parsed = StateFileSchema.safeParse(json);
  if (!parsed.success) {
    // A failed parse has an issue, and it has a path: the top level is an object (its format was read above).
    const issue = parsed.error.issues[0]!;
    throw refuse(`a damaged state file (${issue.path.map(String).join('.')}: ${issue.message})`);
  }
  return parsed.data.state as unknown as MockState;
}

const LOCK_FILE = 'lock';

/**
 * Claims the data directory for this process with the project's one lock (`src/lib/fileLock.ts`,
 * `DIR/lock`), so that two mocks never write the same state: of two mocks started at the same
 * moment exactly one runs, even when the other finds the lock created but not yet written. A lock
 * whose process has died (a crash) is taken over. Resolves to the function that releases it.
 */
export async function lockDataDir(directory: string): Promise<() => Promise<void>> {
  const lock = await acquireFileLock(join(directory, LOCK_FILE), {
    waitMs: 0,
    clock: REAL_LOCK_CLOCK,
    lockedError: (owner) =>
      new DataDirError(`${directory}: in use by another mock service${owner ? ` (process ${owner.pid})` : ''}; stop it or choose another --data-dir`),
  });
  return () => lock.release();
}

/** Removes temporary files of interrupted commits (a snapshot, a journal, a state file being written). */
export async function removeStateLeftovers(directory: string): Promise<void> {
  const ours = [STATE_FILE, SNAPSHOT_FILE, JOURNAL_FILE].map((name) => `${name}.`);
  const leftovers = (await readdir(directory)).filter((name) => ours.some((prefix) => name.startsWith(prefix)) && name.endsWith(TEMPORARY_SUFFIX));
  await Promise.all(leftovers.map((name) => unlink(join(directory, name)).catch(ignoreMissing)));
}

const STORAGE_FULL: Record<string, string> = { ENOSPC: 'is full', EDQUOT: 'is over its disk quota', EFBIG: 'cannot hold a file that large' };

/** What a failed write says about the disk (`is full`), when the disk is why it failed. */
export function storageFullReason(error: unknown): string | undefined {
  const code = String((error as { code?: unknown } | null)?.code);
  return Object.hasOwn(STORAGE_FULL, code) ? `${STORAGE_FULL[code]} (${code})` : undefined;
}

/**
 * Serialises writes of a changing state: a write starts after the previous one finished, and
 * commits asked for while one runs share the next. The state is captured when a write starts, so
 * the last commit's state is always the one that ends up on disk, however many requests commit at
 * once. When a write fails, the commits waiting for it fail with it, unwritten: they hold changes
 * made before the failure, which the store then undoes (see `openDataDirStore`).
 */
export function createCommitQueue(write: () => Promise<void>): { commit(): Promise<void>; settled(): Promise<void> } {
  let running: Promise<void> | undefined;
  let waiting: Promise<void> | undefined;
  const start = (): Promise<void> => {
    // The next write starts only once this one has settled (a waiting commit chains on it), so none has replaced it here.
    const run: Promise<void> = write().finally(() => {
      running = undefined;
    });
    running = run;
    return run;
  };
  return {
    commit() {
      if (waiting) return waiting;
      if (!running) return start();
      const next = running.then(
        () => {
          waiting = undefined;
          return start();
        },
        (error: unknown) => {
          waiting = undefined;
          throw error;
        },
      );
      waiting = next;
      return next;
    },
    settled: async () => {
      await waiting?.catch(() => {});
      await running?.catch(() => {});
    },
  };
}

/** A data directory as start-up found it. */
interface LoadedDataDir {
  state: MockState;
  generation: number;
  snapshotBytes: number;
  journalBytes: number;
}

/** Whether a file of the data directory is there; one that cannot even be looked up (a symbolic link loop) is refused. */
const exists = (path: string) => access(path).then(
  () => true,
  (error: unknown) => {
    if ((error as { code?: unknown }).code === 'ENOENT') return false;
    throw cannotRead(path, error);
  },
);

/**
 * Writes `state` as the whole saved state of a new data directory (a snapshot, an empty journal):
 * how start-up saves a seed, and how a bench makes a large directory without a request per record.
 */
export async function writeDataDirState(directory: string, state: MockState): Promise<void> {
  await writeWhole(directory, state, 1);
}

/** Writes `state` as snapshot `generation` and starts its empty journal. */
async function writeWhole(directory: string, state: MockState, generation: number): Promise<Omit<LoadedDataDir, 'state'>> {
  const staged = await stageSnapshot(join(directory, SNAPSHOT_FILE), snapshotLines(state, generation));
  await staged.commit();
  const journalBytes = await startJournal(join(directory, JOURNAL_FILE), generation);
  return { generation, journalBytes, snapshotBytes: (await stat(join(directory, SNAPSHOT_FILE))).size };
}

/**
 * The state of the data directory: its snapshot and journal; or its `state.json`, converted once
 * (`notice` says where the old file is kept); or, in a directory without either, the `seed`,
 * written at once. A damaged file is refused with a `DataDirError` naming it, and left as it is.
 */
export async function loadDataDir(directory: string, seed: () => Promise<MockState>, notice: (line: string) => void): Promise<LoadedDataDir> {
  const legacy = await readStateFile(directory);
  if (legacy) {
    // Nothing is served before the rename: a crash before it converts the same state.json again.
    const written = await writeWhole(directory, legacy, 1);
    await rename(join(directory, STATE_FILE), join(directory, STATE_BACKUP_FILE));
    notice(`converted ${join(directory, STATE_FILE)} to a snapshot and journal; the old file is kept as ${join(directory, STATE_BACKUP_FILE)}`);
    return { state: legacy, ...written };
  }
  const snapshotPath = join(directory, SNAPSHOT_FILE);
  if (!(await exists(snapshotPath))) {
    const state = await seed();
    return { state, ...(await writeWhole(directory, state, 1)) };
  }
  const refuse = (path: string, what: string) => new DataDirError(`${path}: ${what}; move it away or choose another --data-dir`);
  let snapshot: Awaited<ReturnType<typeof readSnapshot>>;
  try {
    snapshot = await readSnapshot(snapshotPath);
  } catch (error) {
    if (error instanceof SnapshotDamage) throw refuse(snapshotPath, `a damaged snapshot (${error.message})`);
    throw cannotRead(snapshotPath, error);
  }
  const journalPath = join(directory, JOURNAL_FILE);
  const { state, generation } = snapshot;
  const snapshotBytes = (await stat(snapshotPath)).size;
  // A snapshot without a journal (a crash before the first journal was in place), or beside the journal of an older one: it gets a new journal.
  const replayed = (await exists(journalPath))
    ? await replayJournal(journalPath, state, generation).catch((error: unknown) => {
        throw error instanceof JournalDamage ? refuse(journalPath, `a damaged journal (${error.message})`) : cannotRead(journalPath, error);
      })
    : undefined;
  const journalBytes = replayed?.current ? replayed.bytes : await startJournal(journalPath, generation);
  return { state, generation, snapshotBytes, journalBytes };
}

/** Past this many bytes of journal a write makes a new snapshot: half the snapshot's size, so that re-reading the journal at start-up never costs more than the snapshot. */
const MIN_JOURNAL_BOUND = 8 * 1024 * 1024;
export const journalBound = (snapshotBytes: number) => Math.max(MIN_JOURNAL_BOUND, snapshotBytes / 2);

/** How the store of a data directory keeps its state: tracked, journaled, snapshot when the journal is long or the state replaced. */
export interface DataDirPersistence {
  readonly state: MockState;
  /** Makes `fresh` the state (a reset): the next write saves it whole. */
  replace(fresh: MockState): void;
  /** Saves what changed since the last write; on failure the state goes back to what is on disk. */
  write(): Promise<void>;
  /** True when something is not on disk yet. */
  unsaved(): boolean;
  close(): Promise<void>;
}

export async function openDataDirPersistence(directory: string, loaded: LoadedDataDir): Promise<DataDirPersistence> {
  const snapshotPath = join(directory, SNAPSHOT_FILE);
  const journalPath = join(directory, JOURNAL_FILE);
  let tracker: TrackedState = trackState(loaded.state);
  // The state a reset replaced, until the reset's snapshot is on disk: what a failure goes back to.
  let replaced: TrackedState | undefined;
  let { generation, snapshotBytes } = loaded;
  // Undefined when the journal of the last snapshot could not be started: the next write makes another snapshot.
  let journal: (JournalWriter & { readonly broken: boolean }) | undefined = await openJournal(journalPath, loaded.journalBytes);

  const rollback = () => {
    if (replaced) tracker = replaced;
    replaced = undefined;
    tracker.rollback();
  };
  const snapshotDue = () => replaced !== undefined || journal === undefined || journal.broken || journal.bytes > journalBound(snapshotBytes);

  async function writeSnapshot(current: TrackedState): Promise<void> {
    const next = generation + 1;
    const { epoch } = current.take();
    const lines = snapshotLines(current.state, next);
    const staged = await stageSnapshot(snapshotPath, lines);
    crashPoint('mock.before-commit');
    await staged.commit();
    crashPoint('mock.after-commit');
    // The new snapshot is the state from here: the journal of the previous one is out of date (start-up ignores it).
    generation = next;
    // In bytes, as start-up measures it: the lines' characters undercount anything outside ASCII.
    snapshotBytes = (await stat(snapshotPath)).size;
    replaced = undefined;
    current.settle(epoch);
    const previous = journal;
    journal = undefined;
    await previous?.close().catch(() => {});
    // The write is on disk from here, whatever happens to the journal: a journal that cannot be
    // started (a full disk) leaves none, and the next write makes another snapshot instead.
    journal = await startJournal(journalPath, next)
      .then((bytes) => openJournal(journalPath, bytes))
      .catch(() => undefined);
  }

  return {
    get state() {
      return tracker.state;
    },
    replace(fresh) {
      replaced ??= tracker;
      tracker = trackState(fresh);
    },
    async write() {
      const current = tracker;
      const writer = journal;
      try {
        if (snapshotDue() || !writer) {
          await writeSnapshot(current);
          return;
        }
        if (!current.changed()) return;
        const { changes, epoch } = current.take();
        await writer.append(changes);
        current.settle(epoch);
      } catch (error) {
        rollback();
        throw error;
      }
    },
    unsaved: () => replaced !== undefined || tracker.changed(),
    close: async () => {
      await journal?.close();
      journal = undefined;
    },
  };
}
