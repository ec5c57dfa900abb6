import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore, PRIVATE_DIRECTORY_MODE, type DirectoryBlobStore } from './blobStore';
import type { MockStore } from './deps';
import { stateFromFixture, type Fixture } from './fixture';
import { createCommitQueue, DataDirError, loadDataDir, lockDataDir, openDataDirPersistence, removeStateLeftovers } from './persistence';
import type { IdKind, MockState } from './state';

export { DataDirError };

export interface StoreOptions {
  /** What a fresh store (and a reset) starts from. */
  fixture: Fixture;
  /**
   * Keeps the state (`state.snapshot` and `state.journal`) and the documents' files (`blobs/`) here across restarts. A
   * saved state wins over the fixture; a reset goes back to the fixture. Without it the state
   * lives in memory and the files in a temporary directory removed on close.
   */
  dataDir?: string;
  /** Told, in one line, of what opening the data directory did that its owner should know (a conversion of an old state file). */
  onNotice?: (line: string) => void;
}

const BLOB_DIRECTORY = 'blobs';

export async function openStore(options: StoreOptions): Promise<MockStore> {
  return options.dataDir === undefined ? openInMemoryStore(options.fixture) : openDataDirStore(options.fixture, options.dataDir, options.onNotice ?? (() => {}));
}

async function openInMemoryStore(fixture: Fixture): Promise<MockStore> {
  const directory = await mkdtemp(join(tmpdir(), 'taxprep-mock-'));
  // Already gone is fine: a tmp cleaner may have removed it.
  const remove = () => rm(directory, { recursive: true, force: true });
  const blobs = createBlobStore(directory, { durable: false });
  try {
    let state = await seed(fixture, blobs);
    return storeOf(fixture, blobs, {
      get state() {
        return state;
      },
      replace: (fresh) => {
        state = fresh;
      },
      commit: async () => {},
      close: remove,
    });
  } catch (error) {
    await remove();
    throw error;
  }
}

async function openDataDirStore(fixture: Fixture, dataDir: string, notice: (line: string) => void): Promise<MockStore> {
  const blobDirectory = join(dataDir, BLOB_DIRECTORY);
  await mkdir(blobDirectory, { recursive: true, mode: PRIVATE_DIRECTORY_MODE }).catch((error: unknown) => {
    throw new DataDirError(`${dataDir}: cannot be used as a data directory (${error instanceof Error ? error.message : String(error)})`);
  });
  const unlock = await lockDataDir(dataDir);
  try {
    const blobs = createBlobStore(blobDirectory, { durable: true });
    // The directory is ours and nothing runs yet: every temporary file and unreferenced blob is a crash's leftover.
    await removeStateLeftovers(dataDir);
    const loaded = await loadDataDir(dataDir, () => seed(fixture, blobs), notice);
    const persistence = await openDataDirPersistence(dataDir, loaded);
    const queue = createCommitQueue(() => persistence.write());
    const sweep = sweepBlobs(blobs, loaded.state);
    return storeOf(fixture, blobs, {
      get state() {
        return persistence.state;
      },
      replace: (fresh) => persistence.replace(fresh),
      commit: queue.commit,
      // Every commit asked for is on disk before the directory is released, and so is a change
      // made without one: closing never drops what the state holds. A flush that fails is the
      // caller's to hear (the directory is released all the same; the disk keeps the last commit).
      close: async () => {
        try {
          await sweep.stop();
          await queue.settled();
          if (persistence.unsaved()) await queue.commit();
        } finally {
          await persistence.close().finally(unlock);
        }
      },
    });
  } catch (error) {
    await unlock();
    throw error;
  }
}

/** Writes the fixture's documents first: a state never points at a file that is not there. */
async function seed(fixture: Fixture, blobs: DirectoryBlobStore): Promise<MockState> {
  const { state, blobs: seedBlobs } = stateFromFixture(fixture, new Date());
  await inBatches(seedBlobs, ({ blob, content }) => blobs.writeNamed(blob, content));
  return state;
}

/**
 * File operations over many records, a bounded number at a time: a fixture with tens of thousands
 * of documents would otherwise open them all at once and run out of file descriptors (EMFILE).
 */
const FILE_OPERATIONS_AT_ONCE = 64;
async function inBatches<T>(items: readonly T[], operation: (item: T) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < items.length; start += FILE_OPERATIONS_AT_ONCE) {
    await Promise.all(items.slice(start, start + FILE_OPERATIONS_AT_ONCE).map(operation));
  }
}

/**
 * Removes the blobs of a data directory that no record refers to (uploads whose commit a crash
 * prevented) and temporary files, while the mock serves: a directory of a million documents takes
 * seconds to list, which start-up does not wait for. The blobs referred to are those of the state
 * the directory was opened with: any blob since is written by this store, which the sweep skips.
 */
function sweepBlobs(blobs: DirectoryBlobStore, opened: MockState): { stop(): Promise<void> } {
  let stopped = false;
  let referenced: Set<string> | undefined;
  const isReferenced = (blob: string) => (referenced ??= new Set(opened.documents.map((document) => document.blob))).has(blob);
  const running = blobs.sweep(isReferenced, () => stopped).catch(() => {
    // A sweep that fails (a directory made unreadable) leaves the leftovers to the next start-up's.
  });
  return {
    async stop() {
      stopped = true;
      await running;
    },
  };
}

interface Persistence {
  readonly state: MockState;
  /** Makes `fresh` the state (a reset); the next commit saves it. */
  replace(fresh: MockState): void;
  /** Saves the state; when that fails, the state is back to what was last saved. */
  commit(): Promise<void>;
  /** Saves what the state holds that no commit saved yet, then releases the store's directory. */
  close(): Promise<void>;
}

function storeOf(fixture: Fixture, blobs: DirectoryBlobStore, persistence: Persistence): MockStore {
  let closed = false;
  return {
    get state() {
      return persistence.state;
    },
    nextId(kind: IdKind) {
      const { nextIds } = persistence.state;
      const id = nextIds[kind];
      nextIds[kind] = id + 1;
      return id;
    },
    commit: () => persistence.commit(),
    async reset() {
      const previousBlobs = persistence.state.documents.map((document) => document.blob);
      const fresh = await seed(fixture, blobs);
      persistence.replace(fresh);
      // Through the same commit as every request: a reset that cannot be saved leaves the saved
      // state in place, in memory too, and the new seed's files are removed (all of them: a seed's
      // blobs are named after its run, `seed-<run>-<id>`, so the saved state refers to none of them).
      await persistence.commit().catch(async (error: unknown) => {
        await inBatches(fresh.documents, (document) => blobs.remove(document.blob));
        throw error;
      });
      // Only the previous state's files: an upload still in flight keeps its blob.
      const kept = new Set(persistence.state.documents.map((document) => document.blob));
      await inBatches(previousBlobs.filter((blob) => !kept.has(blob)), (blob) => blobs.remove(blob));
    },
    blobs,
    async close() {
      if (closed) return;
      closed = true;
      await persistence.close();
    },
  };
}
