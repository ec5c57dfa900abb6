import type { MigrationArea } from '../schema';

/**
 * The watch area of the shared store: the watch lease (src/follow/lease.ts), the watch state
 * (src/state/watchState.ts), the outbox's claims (src/state/sharedOutbox.ts; its lines are
 * ledger lines of kind `outbox.ndjson`) and the hooks (src/state/sharedHooks.ts). Each row is
 * keyed by the namespace and the service's base URL. A step, once released, never changes.
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
  ],
};
