import { hostname } from 'node:os';
import pg from 'pg';
import type { PoolClient } from 'pg';
import type { StateSetting } from '../types';
import { LedgerAppender, type LedgerKind, type LedgerPlace, type LineStore, type LinePosition } from '../batch/ledger';
import { LedgerLockedError } from '../errors';
import type { LockHolder, SessionLock, SharedStore, StateBackend } from './backend';
import { connectionConfig, redactStateUrl, storeError } from './connection';
import { SCHEMA, ensureSchema } from './schema';

type Env = Record<string, string | undefined>;

/** How often a waiting run asks again for a lock another machine holds (as the file lock polls). */
const LOCK_POLL_MS = 200;

/** Compact a kind's rows when at least this many are superseded, and at least as many as are live (as the file ledger). */
const COMPACT_MIN_DROPPED = 100;

/**
 * The shared store in PostgreSQL: one pool per command, the schema checked (and migrated when
 * behind) on first use. Ledger lines are rows of `taxprep_state.ledger_lines` per namespace, base
 * URL and kind, in `seq` order, holding the entries the file would hold; the kinds' folds read them
 * back unchanged. A run's lock is a session advisory lock on a connection of its own, and the
 * holder appends through that connection: a run that lost its connection (and so its lock) cannot
 * write, so it sends nothing more.
 */
export function openPostgresBackend(setting: StateSetting, baseUrl: string, env: Env): StateBackend {
  const store = openSharedStore(setting, baseUrl, env);
  return {
    describe: store.describe,
    shared: store,
    ledger: (kind) => postgresLedgerPlace(store, kind),
    close: () => store.close(),
  };
}

export function openSharedStore(setting: StateSetting, baseUrl: string, env: Env): SharedStore & { close(): Promise<void> } {
  const url = redactStateUrl(setting.url);
  const where = setting.source === 'flag' ? '--state-url' : setting.source === 'environment' ? 'TAXPREP_STATE_URL' : 'state_url of the profile';
  const pool = new pg.Pool({ ...connectionConfig(setting.url, env, where), max: 4 });
  // An idle connection the server closed (a restart) is reported by the next query, not here.
  pool.on('error', () => undefined);
  // Once per connection, as the pool makes it: a listener added at every checkout piled up on the
  // pooled connections of a long run (a watch renewing its lease), and Node warned of a leak.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const describe = `${url} (namespace "${setting.namespace}")`;
  const failure = (error: unknown) => storeError(error, url);
  let ready: Promise<void> | undefined;
  const connectUnchecked = async (): Promise<PoolClient> => {
    const client = await pool.connect().catch((error: unknown) => {
      throw failure(error);
    });
    return client;
  };
  const connect = async (): Promise<PoolClient> => {
    const client = await connectUnchecked();
    try {
      await (ready ??= ensureSchema(client, url).catch((error: unknown) => {
        ready = undefined;
        throw error;
      }));
    } catch (error) {
      client.release(true);
      throw failure(error);
    }
    return client;
  };
  const scope = [setting.namespace, baseUrl];
  const store: SharedStore & { close(): Promise<void> } = {
    url,
    namespace: setting.namespace,
    baseUrl,
    describe,
    async query<R extends Record<string, unknown>>(sql: string, parameters: unknown[] = []) {
      const client = await connect();
      try {
        return (await client.query<R>(sql, parameters)).rows;
      } catch (error) {
        throw failure(error);
      } finally {
        client.release();
      }
    },
    connect,
    connectUnchecked,
    async sessionLock(name, options) {
      const client = await connect();
      const key = `taxprep|${setting.namespace}|${baseUrl}|${name}`;
      const deadline = options.clock.now().getTime() + options.waitMs;
      try {
        for (;;) {
          const taken = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS taken', [key]);
          if (taken.rows[0]!.taken) break;
          if (options.clock.now().getTime() >= deadline) {
            const holder = await client.query<{ pid: number; hostname: string; started_at: Date }>(
              `SELECT pid, hostname, started_at FROM ${SCHEMA}.lock_holders WHERE namespace = $1 AND base_url = $2 AND name = $3`,
              [...scope, name],
            );
            const row = holder.rows[0];
            throw options.lockedError(row === undefined ? undefined : { pid: row.pid, hostname: row.hostname, started_at: row.started_at.toISOString() });
          }
          await options.clock.sleep(LOCK_POLL_MS);
        }
        await client.query(
          `INSERT INTO ${SCHEMA}.lock_holders (namespace, base_url, name, pid, hostname, started_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (namespace, base_url, name) DO UPDATE SET pid = EXCLUDED.pid, hostname = EXCLUDED.hostname, started_at = EXCLUDED.started_at`,
          [...scope, name, process.pid, hostname(), options.clock.now()],
        );
      } catch (error) {
        client.release(true);
        throw failure(error);
      }
      return {
        client,
        async release() {
          // Ending the connection ends the session and its lock, whatever state the connection is in.
          client.release(true);
        },
      } satisfies SessionLock;
    },
    failure,
    close: () => pool.end(),
  };
  return store;
}

/** The message a waiting run gives, in the file lock's words: `the login-link ledger ... is in use by taxprep (pid N on H, started T)`. */
function ledgerLockedError(where: string, kind: LedgerKind, holder: LockHolder | undefined): LedgerLockedError {
  const who = holder === undefined ? 'another taxprep run' : `taxprep (pid ${holder.pid} on ${holder.hostname}, started ${holder.started_at})`;
  return new LedgerLockedError(`the ${kind.label} ledger ${where} is in use by ${who}; nothing was sent`, {
    details: { ledger: where, ...(holder ?? {}) },
    hint: 'Let that run finish (or raise --lock-wait). A run that died released the lock with its connection.',
  });
}

/** A kind's name in the store's rows: its file's name without `.ndjson` (`login-links`, `accounts`, `documents`). */
export function kindName(kind: Pick<LedgerKind, 'fileName'>): string {
  return kind.fileName.replace(/\.ndjson$/, '');
}

/** Hands each row's entry to `apply`, placed in bytes of the entries' JSON lines, as a file's: the appender counts the same way. */
export function placedRows<E>(entries: readonly E[], apply: (entry: E, position: LinePosition) => void): { lines: number; completeLength: number } {
  let offset = 0;
  for (const entry of entries) {
    const length = Buffer.byteLength(JSON.stringify(entry)) + 1;
    apply(entry, { offset, length });
    offset += length;
  }
  return { lines: entries.length, completeLength: offset };
}

/** A kind's ledger in the shared store: its rows, and the session lock its writer holds. */
function postgresLedgerPlace(store: SharedStore, kind: LedgerKind): LedgerPlace {
  const where = store.describe;
  const scope = [store.namespace, store.baseUrl, kindName(kind)];
  let held: SessionLock | undefined;
  const lines: LineStore = {
    where,
    async forEachLine<E extends { type: string }>(_kind: LedgerKind, apply: (entry: E, position: LinePosition) => void) {
      const sql = `SELECT entry FROM ${SCHEMA}.ledger_lines WHERE namespace = $1 AND base_url = $2 AND kind = $3 ORDER BY seq`;
      const rows = held === undefined ? await store.query<{ entry: E }>(sql, scope) : await queryOn(held.client, store, sql, scope);
      return placedRows(rows.map((row) => row.entry as E), apply);
    },
    async openAppender(_kind, read, live) {
      if (held === undefined) throw new Error(`the ${kind.label} ledger ${where} is not locked`);
      const client = held.client;
      const dropped = read.lines - live.count;
      const compacted = dropped >= COMPACT_MIN_DROPPED && dropped >= live.count;
      let length = read.completeLength;
      if (compacted) {
        const kept: string[] = [];
        for await (const line of live.lines()) kept.push(line);
        await inTransaction(client, store, async () => {
          await client.query(`DELETE FROM ${SCHEMA}.ledger_lines WHERE namespace = $1 AND base_url = $2 AND kind = $3`, scope);
          await insertLines(client, scope, kept);
        });
        length = kept.reduce((bytes, line) => bytes + Buffer.byteLength(line), 0);
      }
      // The batch engine's appender, group-committing through the lock holder's connection: a
      // batch of lines is one insert, committed before the callers' promises resolve.
      const sink = {
        write: async (_text: string, batch: readonly string[]) => {
          await insertLines(client, scope, batch).catch((error: unknown) => {
            throw store.failure(error);
          });
        },
        sync: async () => undefined,
        close: async () => undefined,
      };
      return { appender: LedgerAppender.onto(where, kind, sink, length), compacted };
    },
  };
  return {
    lines,
    async lock(options) {
      held = await store.sessionLock(`ledger:${kindName(kind)}`, { waitMs: options.waitMs, clock: options.clock, lockedError: (holder) => ledgerLockedError(lines.where, kind, holder) });
      const lock = held;
      return {
        async release() {
          held = undefined;
          await lock.release();
        },
      };
    },
  };
}

async function queryOn<R extends Record<string, unknown>>(client: PoolClient, store: SharedStore, sql: string, parameters: unknown[]): Promise<R[]> {
  try {
    return (await client.query<R>(sql, parameters)).rows;
  } catch (error) {
    throw store.failure(error);
  }
}

async function inTransaction(client: PoolClient, store: SharedStore, work: () => Promise<void>): Promise<void> {
  try {
    await client.query('BEGIN');
    await work();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw store.failure(error);
  }
}

/** What writing ledger lines needs of a connection: a held session's (PoolClient), or a transaction's of one's own (the outbox's, fenced by the watch lease: ./sharedOutbox.ts). */
export interface Statements {
  query(sql: string, parameters: unknown[]): Promise<unknown>;
}

/** Lines (JSON text, one entry each) inserted in order in one statement: committed together, or not at all. */
export function insertLines(client: Statements, scope: unknown[], lines: readonly string[]): Promise<unknown> {
  return client.query(
    `INSERT INTO ${SCHEMA}.ledger_lines (namespace, base_url, kind, entry)
     SELECT $1, $2, $3, line::jsonb FROM unnest($4::text[]) WITH ORDINALITY AS given(line, n) ORDER BY n`,
    [...scope, lines.map((line) => line.trimEnd())],
  );
}
