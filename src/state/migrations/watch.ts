import type { MigrationArea } from '../schema';

/**
 * The watch area of the shared store: the watch lease (src/follow/lease.ts), the watch state
 * (src/state/watchState.ts), the outbox's claims (src/state/sharedOutbox.ts; its lines are
 * ledger lines of kind `outbox.ndjson`), the hooks (src/state/sharedHooks.ts) and, from step 2,
 * the requests hooks commands hand the lease's holder (src/state/sharedInbox.ts) and since when
 * the holder holds the lease. Each row is keyed by the namespace and the service's base URL. A
 * step, once released, never changes.
 */
export const WATCH_AREA: MigrationArea = {
  area: 'watch',
  steps: [
    [
      `CREATE TABLE taxprep_state.watch_lease (
        namespace text NOT NULL,
        base_url text NOT NULL,
        holder text NOT NULL,
        fence bigint NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (namespace, base_url)
      )`,
      `CREATE TABLE taxprep_state.watch_state (
        namespace text NOT NULL,
        base_url text NOT NULL,
        state jsonb NOT NULL,
        saved_at timestamptz NOT NULL,
        PRIMARY KEY (namespace, base_url)
      )`,
      `CREATE TABLE taxprep_state.outbox_claims (
        namespace text NOT NULL,
        base_url text NOT NULL,
        delivery text NOT NULL,
        attempt integer NOT NULL,
        claimed_by text NOT NULL,
        fence bigint NOT NULL,
        claimed_at timestamptz NOT NULL,
        PRIMARY KEY (namespace, base_url, delivery)
      )`,
      `CREATE TABLE taxprep_state.hooks (
        namespace text NOT NULL,
        base_url text NOT NULL,
        hooks jsonb NOT NULL,
        PRIMARY KEY (namespace, base_url)
      )`,
    ],
    [
      // A lease held when this step runs counts from then: close enough for "a watch is running since".
      `ALTER TABLE taxprep_state.watch_lease ADD COLUMN taken_at timestamptz NOT NULL DEFAULT now()`,
      `CREATE TABLE taxprep_state.hooks_requests (
        namespace text NOT NULL,
        base_url text NOT NULL,
        id text NOT NULL,
        request jsonb NOT NULL,
        made_at timestamptz NOT NULL,
        PRIMARY KEY (namespace, base_url, id)
      )`,
    ],
  ],
};
