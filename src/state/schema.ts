import type { ClientBase } from 'pg';
import { StateStoreError } from '../errors';
import { AREAS } from './migrations';

/**
 * taxprep's own schema in the shared store, `taxprep_state`, created and migrated by taxprep.
 * Each area (core: ledgers, locks, learned rules; others added beside it in ./migrations/) has
 * numbered steps and a version row in `taxprep_state.schema_versions`. Migrating runs in one
 * transaction under an advisory lock, so two machines migrating at once do it once. A schema newer
 * than this taxprep knows is refused, never written to.
 */
export interface MigrationArea {
  /** The version row's name: `core`, `watch`. */
  area: string;
  /** Step N (1-based) brings the area from version N-1 to N: SQL statements run in order. */
  steps: ReadonlyArray<readonly string[]>;
}

export const SCHEMA = 'taxprep_state';

/** The advisory lock every migration takes (a fixed 64-bit key: "taxprep" in ASCII). */
const MIGRATION_LOCK_KEY = '8386116405491494912';

export interface SchemaVersion {
  area: string;
  /** In the database (0: not created yet). */
  found: number;
  /** What this taxprep knows. */
  known: number;
}

/** Each area's version in the database beside what this taxprep knows. */
export async function schemaVersions(client: ClientBase, areas: readonly MigrationArea[] = AREAS): Promise<SchemaVersion[]> {
  const table = await client.query<{ exists: boolean }>(`SELECT to_regclass('${SCHEMA}.schema_versions') IS NOT NULL AS exists`);
  const rows = table.rows[0]!.exists ? (await client.query<{ area: string; version: number }>(`SELECT area, version FROM ${SCHEMA}.schema_versions`)).rows : [];
  const found = new Map(rows.map((row) => [row.area, row.version]));
  return areas.map((area) => ({ area: area.area, found: found.get(area.area) ?? 0, known: area.steps.length }));
}

/** Refuses a schema newer than this taxprep knows: writing to it could break what a newer taxprep keeps there. */
export function refuseNewer(versions: readonly SchemaVersion[], store: string): void {
  const newer = versions.find((version) => version.found > version.known);
  if (newer === undefined) return;
  throw new StateStoreError(
    `the shared state store ${store} has schema ${newer.area} version ${newer.found}, newer than this taxprep knows (${newer.known}); nothing was written`,
    { details: { store, area: newer.area, found: newer.found, known: newer.known }, hint: 'Upgrade taxprep on this machine to the version the rest of the team runs.' },
  );
}

/**
 * Brings every area up to what this taxprep knows, in one transaction under the migration lock
 * (a second machine waits, then finds nothing left to do). Returns the steps run, per area.
 */
export async function migrate(client: ClientBase, store: string, areas: readonly MigrationArea[] = AREAS): Promise<Array<{ area: string; from: number; to: number }>> {
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.schema_versions (area text PRIMARY KEY, version integer NOT NULL, migrated_at timestamptz NOT NULL DEFAULT now())`);
    const versions = await schemaVersions(client, areas);
    refuseNewer(versions, store);
    const done: Array<{ area: string; from: number; to: number }> = [];
    for (const version of versions) {
      if (version.found === version.known) continue;
      const area = areas.find((candidate) => candidate.area === version.area)!;
      for (const step of area.steps.slice(version.found)) for (const statement of step) await client.query(statement);
      await client.query(
        `INSERT INTO ${SCHEMA}.schema_versions (area, version) VALUES ($1, $2) ON CONFLICT (area) DO UPDATE SET version = EXCLUDED.version, migrated_at = now()`,
        [version.area, version.known],
      );
      done.push({ area: version.area, from: version.found, to: version.known });
    }
    await client.query('COMMIT');
    return done;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Makes sure the schema is usable before anything is read or written: refused when newer, migrated
 * when older (the role then needs to create tables: a team that gives operators a role without DDL
 * runs `taxprep state migrate` once with the owner role, docs/team.md).
 */
export async function ensureSchema(client: ClientBase, store: string): Promise<void> {
  const versions = await schemaVersions(client);
  refuseNewer(versions, store);
  if (versions.every((version) => version.found === version.known)) return;
  try {
    await migrate(client, store);
  } catch (error) {
    if ((error as { code?: string }).code !== '42501') throw error;
    const behind = versions.filter((version) => version.found < version.known).map((version) => `${version.area} ${version.found} < ${version.known}`);
    throw new StateStoreError(`the shared state store ${store} needs its schema migrated (${behind.join(', ')}), and this role may not create tables; nothing was written`, {
      details: { store },
      hint: 'Run `taxprep state migrate` once with the role that owns the schema (docs/team.md), then run this again.',
      cause: error,
    });
  }
}

/**
 * The tables the areas' steps leave in the schema (created, and not dropped by a later step), in
 * the order created: doctor checks the role's rights on each, so that a table a new step adds is
 * checked without a list of its own to keep.
 */
export function schemaTables(areas: readonly MigrationArea[] = AREAS): string[] {
  const named = (verb: string, statement: string) => [...statement.matchAll(new RegExp(`${verb} TABLE (?:IF (?:NOT )?EXISTS )?${SCHEMA}\\.(\\w+)`, 'gi'))].map((match) => `${SCHEMA}.${match[1]!.toLowerCase()}`);
  // A Set keeps the order of creation.
  const tables = new Set<string>();
  for (const statement of areas.flatMap((area) => area.steps.flat())) {
    for (const table of named('CREATE', statement)) tables.add(table);
    for (const table of named('DROP', statement)) tables.delete(table);
  }
  return [...tables];
}
