import type { PoolClient } from 'pg';
import { LeaseLostError } from '../follow/lease';
import type { SharedStore } from './backend';

/**
 * What the watch lease, the watch state, the outbox and the hooks need of the shared store:
 * parameterised statements, and a transaction. Failures of the store are its own (exit 13), but a
 * lease lost is watch's to handle, so it passes through as it is.
 */
export interface TeamSql {
  query<R extends Record<string, unknown> = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
  transaction<T>(work: (tx: TeamSql) => Promise<T>): Promise<T>;
  /**
   * Calls `notified` at each NOTIFY on `channel` (an identifier of ours, never a user's text) until
   * `signal` aborts, on a connection of its own, which it then closes; a lost connection ends it
   * with the store's failure.
   */
  listen(channel: string, signal: AbortSignal, notified: () => void): Promise<void>;
}

/** The rows a watch reads and writes: its namespace and the service's base URL, as every piece of shared state. */
export interface TeamScope {
  namespace: string;
  baseUrl: string;
}

export function teamScopeOf(store: SharedStore): TeamScope {
  return { namespace: store.namespace, baseUrl: store.baseUrl };
}

export function teamSqlOf(store: SharedStore): TeamSql {
  const failure = (error: unknown) => (error instanceof LeaseLostError ? error : store.failure(error));
  return {
    query: (text, params = []) => store.query(text, [...params]),
    async transaction(work) {
      const client = await store.connect();
      try {
        await client.query('BEGIN');
        const result = await work(onClient(client, failure));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw failure(error);
      } finally {
        client.release();
      }
    },
    async listen(channel, signal, notified) {
      const client = await store.connect();
      const onNotification = (message: { channel: string }) => {
        if (message.channel === channel) notified();
      };
      client.on('notification', onNotification);
      try {
        await client.query(`LISTEN ${channel}`);
        await new Promise<void>((resolve, reject) => {
          if (signal.aborted) return resolve();
          signal.addEventListener('abort', () => resolve(), { once: true });
          client.once('error', reject);
          client.once('end', () => reject(new Error('Connection terminated unexpectedly')));
        });
      } catch (error) {
        throw failure(error);
      } finally {
        client.removeListener('notification', onNotification);
        // Closed, not put back: a pooled connection would go on listening.
        client.release(true);
      }
    },
  };
}

/** A table that keeps one JSON document per namespace and base URL (the hooks, the learned rules). */
export interface TeamDocument {
  table: string;
  column: string;
  /** The document of a row made for the first change. */
  empty: string;
  /** More to set with each change (`updated_at = now()`). */
  alsoSet?: string;
}

/**
 * Changes the team's document in `where` in a transaction that locks its row (made first when
 * there is none), so that two machines changing it at once never lose each other's change:
 * `change` gets the document as stored (JSON text) and gives back the new one and a result.
 */
export function changeTeamDocument<T>(sql: TeamSql, team: TeamScope, where: TeamDocument, change: (stored: string) => { document: string; result: T }): Promise<T> {
  const key = [team.namespace, team.baseUrl];
  return sql.transaction(async (tx) => {
    await tx.query(`INSERT INTO ${where.table} (namespace, base_url, ${where.column}) VALUES ($1, $2, $3::jsonb) ON CONFLICT DO NOTHING`, [...key, where.empty]);
    const rows = await tx.query<{ document: string }>(`SELECT ${where.column}::text AS document FROM ${where.table} WHERE namespace = $1 AND base_url = $2 FOR UPDATE`, key);
    const { document, result } = change(rows[0]!.document);
    await tx.query(`UPDATE ${where.table} SET ${where.column} = $3::jsonb${where.alsoSet === undefined ? '' : `, ${where.alsoSet}`} WHERE namespace = $1 AND base_url = $2`, [...key, document]);
    return result;
  });
}

function onClient(client: PoolClient, failure: (error: unknown) => unknown): TeamSql {
  return {
    async query(text, params = []) {
      try {
        return (await client.query(text, [...params])).rows;
      } catch (error) {
        throw failure(error);
      }
    },
    transaction: () => Promise.reject(new Error('a transaction within a transaction')),
    listen: () => Promise.reject(new Error('a listener within a transaction')),
  };
}
