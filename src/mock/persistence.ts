import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { crashPoint } from '../lib/crashPoints';
import { acquireFileLock, REAL_LOCK_CLOCK } from '../lib/fileLock';
import { stageFileAtomically, TEMPORARY_SUFFIX } from '../lib/files';
import { ignoreMissing } from './blobStore';
import type { IdKind, MockState } from './state';

/**
 * The state file of a data directory (`serve --mock --data-dir DIR`): `DIR/state.json`, written
 * whole to a temporary file, flushed, and renamed over the old one, so that a crash at any moment
 * leaves either the previous state or the new one, never a mix.
 */

export const STATE_FILE = 'state.json';
const STATE_FORMAT = 'taxprep-mock-state';
const STATE_VERSION = 1;

/** The data directory cannot be used as it is: the message names the file and what is wrong. */
export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirError';
  }
}

// A record, so that adding a kind of id to the state without adding it here fails to compile.
const ID_KINDS = Object.keys({
  partner: true,
  account: true,
  user: true,
  loginLink: true,
  document: true,
  project: true,
  outstandingItem: true,
  deliverable: true,
  email: true,
} satisfies Record<IdKind, true>) as IdKind[];
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
    nextIds: z.object(Object.fromEntries(ID_KINDS.map((kind) => [kind, z.number().int().positive()])) as Record<IdKind, z.ZodNumber>),
    clockOffsetMs: z.number().finite().nonnegative(),
    signingSecret: z.string().min(16),
    simulation: z
      .object({
        seed: z.number().int().nonnegative(),
        started_at_ms: z.number().finite(),
        steps_done: z.number().int().nonnegative(),
        documents_seen: z.number().int().nonnegative(),
      })
      .optional(),
  }),
});

/** The saved state, or undefined when the directory has none yet. */
export async function readStateFile(directory: string): Promise<MockState | undefined> {
  const path = join(directory, STATE_FILE);
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw new DataDirError(`${path}: cannot read the saved state (${error instanceof Error ? error.message : String(error)})`);
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
    const issue = parsed.error.issues[0];
    const where = issue ? [issue.path.map(String).join('.'), issue.message].filter(Boolean).join(': ') : 'unexpected shape';
    throw refuse(`a damaged state file (${where})`);
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

/** Removes temporary state files of interrupted commits. */
export async function removeStateLeftovers(directory: string): Promise<void> {
  const leftovers = (await readdir(directory)).filter((name) => name.startsWith(`${STATE_FILE}.`) && name.endsWith(TEMPORARY_SUFFIX));
  await Promise.all(leftovers.map((name) => unlink(join(directory, name)).catch(ignoreMissing)));
}

/** The state file's text for `state`. */
export function stateText(state: MockState): string {
  return JSON.stringify({ format: STATE_FORMAT, version: STATE_VERSION, state });
}

/**
 * The commit of a request's changes: the new state is complete and flushed beside the old one
 * before the rename that makes it the state. The crash points mark the two moments a test kills
 * at: before the rename (the change is lost, unacknowledged) and after it (kept, unacknowledged).
 */
export async function writeStateFile(directory: string, text: string): Promise<void> {
  const staged = await stageFileAtomically(join(directory, STATE_FILE), text, { durable: true });
  crashPoint('mock.before-commit');
  await staged.commit();
  crashPoint('mock.after-commit');
}

/** The state a text from `stateText` holds. */
export function stateOfText(text: string): MockState {
  return (JSON.parse(text) as { state: MockState }).state;
}

const STORAGE_FULL: Record<string, string> = { ENOSPC: 'is full', EDQUOT: 'is over its disk quota', EFBIG: 'cannot hold a file that large' };

/** What a failed write says about the disk (`is full`), when the disk is why it failed. */
export function storageFullReason(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && Object.hasOwn(STORAGE_FULL, code) ? `${STORAGE_FULL[code]} (${code})` : undefined;
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
    const run: Promise<void> = write().finally(() => {
      if (running === run) running = undefined;
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
