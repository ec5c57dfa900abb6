import type { MigrationArea } from '../schema';

/**
 * The core area's steps: the ledgers (accounts, login links, documents), their lock holders and
 * the learned upload rules. Every row carries its namespace and service base URL, so that two
 * partners or two services on one database never see each other's rows. A step, once released,
 * never changes: a new need is a new step at the end.
 */
export const CORE: MigrationArea = {
  area: 'core',
  steps: [
    [
      `CREATE TABLE taxprep_state.ledger_lines (
        namespace text NOT NULL,
        base_url text NOT NULL,
        kind text NOT NULL,
        seq bigserial NOT NULL,
        entry jsonb NOT NULL,
        at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (namespace, base_url, kind, seq)
      )`,
      `CREATE TABLE taxprep_state.lock_holders (
        namespace text NOT NULL,
        base_url text NOT NULL,
        name text NOT NULL,
        pid integer NOT NULL,
        hostname text NOT NULL,
        started_at timestamptz NOT NULL,
        PRIMARY KEY (namespace, base_url, name)
      )`,
      `CREATE TABLE taxprep_state.learned_rules (
        namespace text NOT NULL,
        base_url text NOT NULL,
        rules jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (namespace, base_url)
      )`,
    ],
  ],
};
