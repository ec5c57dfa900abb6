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
  };
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
  };
}
