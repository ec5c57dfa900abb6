import { EXIT, StateStoreError } from '../../errors';
import { formatDuration } from '../../lib/duration';
import type { Context } from '../../types';
import { fail, ok, warn, type Check } from './checks';
import { CLOCK_SKEW_WARNING_MS } from './service';

/** Each right the operators' role needs, per table (has_table_privilege is true when ANY of a list is held: asked one by one). */
const NEEDED_RIGHTS: ReadonlyArray<[table: string, right: string]> = [
  ...['SELECT', 'INSERT', 'DELETE'].map((right): [string, string] => ['taxprep_state.ledger_lines', right]),
  ...['SELECT', 'INSERT', 'UPDATE'].map((right): [string, string] => ['taxprep_state.lock_holders', right]),
];

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
    const { schemaVersions } = await import('../../state/schema');
    const versions = await schemaVersions(client);
    const newer = versions.find((version) => version.found > version.known);
    const behind = versions.filter((version) => version.found < version.known);
    const listed = versions.map((version) => `${version.area} ${version.found}`).join(', ');
    if (newer !== undefined) checks.push(fail('state', 'schema', `version ${listed}: newer than this taxprep knows (${newer.area} ${newer.known})`, 'Upgrade taxprep on this machine to the version the rest of the team runs.', EXIT.STATE_STORE));
    else if (behind.length > 0) checks.push(warn('state', 'schema', `version ${listed}; this taxprep knows ${behind.map((version) => `${version.area} ${version.known}`).join(', ')}`, 'Run `taxprep state migrate` with the role that owns the schema (or let the first command migrate, if its role may).'));
    else checks.push(ok('state', 'schema', `version ${listed}, as this taxprep knows`));
    if (behind.length === 0 && newer === undefined) {
      const missing: string[] = [];
      for (const [table, right] of NEEDED_RIGHTS) {
        const held = await client.query<{ held: boolean }>('SELECT has_table_privilege($1, $2) AS held', [table, right]);
        if (!held.rows[0]!.held) missing.push(`${right} on ${table}`);
      }
      if (missing.length === 0) checks.push(ok('state', 'permissions', 'the role may read and write the ledgers and their lock holders'));
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
