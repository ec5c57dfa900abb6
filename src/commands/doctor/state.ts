import type { ClientBase } from 'pg';
import { EXIT, StateStoreError } from '../../errors';
import { formatDuration } from '../../lib/duration';
import type { Context } from '../../types';
import { fail, ok, warn, type Check } from './checks';
import { CLOCK_SKEW_WARNING_MS } from './service';

/** The rights docs/team.md grants the operators' role on every table of the schema. */
const TABLE_RIGHTS = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'];

/**
 * Tables docs/team.md lets a team keep from a role altogether (the hooks, for their secrets: that
 * role's `watch` and `hooks` are refused), with what a role given one needs (the watch's own role
 * is granted SELECT, INSERT, UPDATE on the hooks).
 */
const WITHHOLDABLE: Readonly<Record<string, readonly string[]>> = { 'taxprep_state.hooks': ['SELECT', 'INSERT', 'UPDATE'] };

interface RoleRights {
  /** `<rights> on <table>` the role lacks. */
  missing: string[];
  /** Withholdable tables the role holds no right on. */
  withheld: string[];
}

/**
 * What the role lacks: on each table the migrations create (`schemaTables`), each right asked
 * alone (has_table_privilege is true when ANY of a list is held), and USAGE on each sequence of
 * the schema (the one that numbers ledger lines).
 */
async function roleRights(client: ClientBase, schema: string, tables: readonly string[]): Promise<RoleRights> {
  const rights = await client.query<{ table_name: string; right_name: string; held: boolean }>(
    `SELECT t.table_name, r.right_name, has_table_privilege(t.table_name, r.right_name) AS held
       FROM unnest($1::text[]) WITH ORDINALITY AS t(table_name, n) CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS r(right_name, m) ORDER BY t.n, r.m`,
    [tables, TABLE_RIGHTS],
  );
  const sequences = await client.query<{ sequence_name: string; held: boolean }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS sequence_name, has_sequence_privilege(c.oid, 'USAGE') AS held
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'S' ORDER BY c.relname`,
    [schema],
  );
  const missing: string[] = [];
  const withheld: string[] = [];
  for (const table of tables) {
    const rows = rights.rows.filter((row) => row.table_name === table);
    const needed = WITHHOLDABLE[table];
    if (needed !== undefined && rows.every((row) => !row.held)) {
      withheld.push(table);
      continue;
    }
    const lacking = rows.filter((row) => !row.held && (needed ?? TABLE_RIGHTS).includes(row.right_name)).map((row) => row.right_name);
    if (lacking.length > 0) missing.push(`${lacking.join(', ')} on ${table}`);
  }
  for (const row of sequences.rows) if (!row.held) missing.push(`USAGE on sequence ${row.sequence_name}`);
  return { missing, withheld };
}

/**
 * The shared store, when a state URL is set (none: no line): reachable, its schema's version
 * beside this taxprep's, the role's rights on taxprep's tables, and the clock of this machine
 * beside the database's (expiry times recorded on one machine are read on another).
 */
export async function stateChecks(ctx: Pick<Context, 'state' | 'clock'>): Promise<Check[]> {
  const store = (await ctx.state()).shared;
  if (store === undefined) return [];
  const failed = (name: string, error: unknown): Check => {
    const refusal = store.failure(error);
    const message = refusal instanceof Error ? refusal.message : String(refusal);
    return fail('state', name, message, (refusal instanceof StateStoreError && refusal.hint) || 'See docs/team.md.', EXIT.STATE_STORE);
  };
  let client;
  try {
    client = await store.connectUnchecked();
  } catch (error) {
    return [failed('reachable', error)];
  }
  try {
    const before = ctx.clock.now().getTime();
    const facts = (await client.query<{ now: Date; version: string }>("SELECT now() AS now, current_setting('server_version') AS version")).rows[0]!;
    const after = ctx.clock.now().getTime();
    const checks = [ok('state', 'reachable', `${store.describe}, PostgreSQL ${facts.version}, answered in ${formatDuration(after - before)}`)];
    const { SCHEMA, schemaTables, schemaVersions } = await import('../../state/schema');
    const versions = await schemaVersions(client);
    const newer = versions.find((version) => version.found > version.known);
    const behind = versions.filter((version) => version.found < version.known);
    const listed = versions.map((version) => `${version.area} ${version.found}`).join(', ');
    if (newer !== undefined) checks.push(fail('state', 'schema', `version ${listed}: newer than this taxprep knows (${newer.area} ${newer.known})`, 'Upgrade taxprep on this machine to the version the rest of the team runs.', EXIT.STATE_STORE));
    else if (behind.length > 0) checks.push(warn('state', 'schema', `version ${listed}; this taxprep knows ${behind.map((version) => `${version.area} ${version.known}`).join(', ')}`, 'Run `taxprep state migrate` with the role that owns the schema (or let the first command migrate, if its role may).'));
    else checks.push(ok('state', 'schema', `version ${listed}, as this taxprep knows`));
    if (behind.length === 0 && newer === undefined) {
      const tables = schemaTables();
      const { missing, withheld } = await roleRights(client, SCHEMA, tables);
      const kept = withheld.length === 0 ? '' : ` but ${withheld.join(', ')} (kept from this role: its watch and hooks commands are refused)`;
      if (missing.length === 0) checks.push(ok('state', 'permissions', `the role may read and write every table of the schema${kept}`));
      else checks.push(fail('state', 'permissions', `the role lacks ${missing.join(', ')}`, 'Grant the role the rights docs/team.md lists (GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA taxprep_state ...).', EXIT.STATE_STORE));
    }
    const skewMs = facts.now.getTime() - (before + after) / 2;
    const size = Math.abs(skewMs);
    const words = size < 1500 ? 'in step with the database (within a second)' : `${formatDuration(size)} ${skewMs > 0 ? 'behind' : 'ahead of'} the database`;
    if (size <= CLOCK_SKEW_WARNING_MS) checks.push(ok('state', 'clock', `this machine's clock is ${words}`));
    else checks.push(warn('state', 'clock', `this machine's clock is ${words}: link expiry times recorded here are read on other machines`, 'Set the clock by network time (e.g. `timedatectl set-ntp true`) here and on the database server.'));
    return checks;
  } catch (error) {
    return [failed('reachable', error)];
  } finally {
    client.release();
  }
}
