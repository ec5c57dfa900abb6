import type { PoolClient } from 'pg';
import type { Clock, Context } from '../types';
import { defaultPathOf, filePlace, type LedgerKind, type LedgerPlace } from '../batch/ledger';
import { appDirectory } from '../lib/paths';
import { UsageError } from '../errors';

/**
 * Where taxprep keeps its state: the seam between the batch engine (ledger kinds, their folds, the
 * lock, the pacer: one of each) and the place the state lives. Files in the user's data directory
 * are the default and today's behaviour; with a state URL (--state-url, TAXPREP_STATE_URL, the
 * profile's `state_url`) the same ledgers live in PostgreSQL (./postgres.ts), shared by every
 * machine of a team, kept apart per namespace and service base URL. Only this file is loaded by a
 * command that touches state and has no state URL: the database client loads with ./postgres.ts.
 */
export interface StateBackend {
  /** How the state is kept, for messages and `doctor`: a directory, or the store's URL (redacted) and namespace. */
  readonly describe: string;
  /** A ledger kind's place: its lines and its lock. */
  ledger(kind: LedgerKind): LedgerPlace;
  /** The shared store, for state other than ledgers (learned rules; watch state, outbox, hooks); undefined for files. */
  readonly shared: SharedStore | undefined;
  close(): Promise<void>;
}

/** A lock held on a dedicated connection for as long as a run: a session advisory lock (./postgres.ts). */
export interface SessionLock {
  /** The connection that holds the lock: the holder writes through it, so that losing the lock stops its writes. */
  readonly client: PoolClient;
  release(): Promise<void>;
}

/** What the shared store offers every area of state (its schema is migrated when it is opened). */
export interface SharedStore {
  /** The store as printed: its URL without a password. */
  readonly url: string;
  readonly namespace: string;
  /** The service base URL the state belongs to: rows of another base URL are never read. */
  readonly baseUrl: string;
  /** `url (namespace "ns")`, for messages. */
  readonly describe: string;
  /** One statement, committed on its own (a failure is a StateStoreError, exit 13). */
  query<R extends Record<string, unknown>>(sql: string, parameters?: unknown[]): Promise<R[]>;
  /** A connection of one's own, for a transaction (release it in `finally`). */
  connect(): Promise<PoolClient>;
  /** A connection before the schema is checked or migrated: `state migrate`, `doctor`. */
  connectUnchecked(): Promise<PoolClient>;
  /**
   * Takes a session advisory lock named `name` within this namespace and base URL, waiting up to
   * `waitMs`, and records its holder (pid, host, start) for the message of whoever waits;
   * `lockedError` words the refusal from that holder.
   */
  sessionLock(name: string, options: { waitMs: number; clock: Clock; lockedError: (holder: LockHolder | undefined) => Error }): Promise<SessionLock>;
  /** A failure as exit 13, naming the store and what to do. */
  failure(error: unknown): unknown;
}

export interface LockHolder {
  pid: number;
  hostname: string;
  started_at: string;
}

/** The files of this machine: each kind's ledger in the user's data directory, as always. */
export function fileBackend(env: Record<string, string | undefined>): StateBackend {
  return {
    describe: `files in ${appDirectory('data', env)}`,
    ledger: (kind) => filePlace(defaultPathOf(kind, env)),
    shared: undefined,
    close: async () => undefined,
  };
}

/**
 * The backend of the resolved settings: the shared store when a state URL is set, else the files.
 * Context.state() calls it once per command.
 */
export async function openStateBackend(ctx: Pick<Context, 'env' | 'settings'>): Promise<StateBackend> {
  const settings = await ctx.settings();
  if (settings.state === undefined) return fileBackend(ctx.env);
  const { openPostgresBackend } = await import('./postgres');
  return openPostgresBackend(settings.state, settings.baseUrl, ctx.env);
}

/** The shared store, for a command that has no use without one (`state import`, `state migrate`). */
export async function sharedStoreOf(ctx: Pick<Context, 'state'>, command: string): Promise<SharedStore> {
  const shared = (await ctx.state()).shared;
  if (shared !== undefined) return shared;
  throw new UsageError(`\`taxprep ${command}\` needs a shared store, and none is set`, {
    hint: "Set --state-url, TAXPREP_STATE_URL or the profile's state_url (taxprep profiles add NAME --state-url URL); see docs/team.md.",
  });
}

/** A kind's place for a command: `--ledger PATH` (a file, whatever the backend), else the backend's. */
export async function ledgerPlaceOf(kind: LedgerKind, ctx: Pick<Context, 'state'>, flags: { ledgerPath: string | undefined }): Promise<LedgerPlace> {
  if (flags.ledgerPath !== undefined) return filePlace(flags.ledgerPath);
  return (await ctx.state()).ledger(kind);
}
