import type { LearnedService, LearnedStore } from '../config/learned';
import { UsageError } from '../errors';
import type { SharedStore } from './backend';
import { SCHEMA } from './schema';
import { changeTeamDocument, teamScopeOf, teamSqlOf } from './teamSql';

const LEARNED_DOCUMENT = { table: `${SCHEMA}.learned_rules`, column: 'rules', empty: '{}', alsoSet: 'updated_at = now()' };

/** PostgreSQL's "undefined table": a store whose schema was never created has learned nothing. */
const UNDEFINED_TABLE = '42P01';

/**
 * The rules learned from the service (src/config/learned.ts) in a shared store: one document per
 * namespace and base URL in `taxprep_state.learned_rules`, so that an upload limit one operator's
 * refusal taught is known on every machine of the team, and the cron server's `--all` finds the
 * offset's name once for all. Reading never migrates the schema (doctor reads it, and changes
 * nothing); a change is a transaction that locks the row and applies the change to what is there
 * then, so two machines learning two rules at once keep both.
 */
export function sharedLearned(shared: SharedStore): LearnedStore {
  const sql = teamSqlOf(shared);
  const { namespace, baseUrl } = teamScopeOf(shared);
  const damaged = () =>
    new UsageError(`the rules learned from the service in the shared store ${shared.describe} are damaged: the row of ${SCHEMA}.learned_rules is not a JSON object`, {
      details: { store: shared.describe },
      hint: `Delete that row (namespace "${namespace}", base URL ${baseUrl}): taxprep learns each rule again from the service when it meets it.`,
    });
  const parse = (rules: unknown): LearnedService => {
    if (typeof rules !== 'object' || rules === null || Array.isArray(rules)) throw damaged();
    return rules as LearnedService;
  };
  let known: LearnedService | undefined;
  return {
    where: `the shared store ${shared.describe}`,
    whose: `the namespace "${namespace}" and this base URL (every machine of the team)`,
    forget: `delete their row of ${SCHEMA}.learned_rules to forget them`,
    async read() {
      if (known !== undefined) return known;
      const client = await shared.connectUnchecked();
      try {
        const rows = await client.query<{ rules: unknown }>(`SELECT rules FROM ${SCHEMA}.learned_rules WHERE namespace = $1 AND base_url = $2`, [namespace, baseUrl]);
        known = rows.rows[0] === undefined ? {} : parse(rows.rows[0].rules);
      } catch (error) {
        if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw shared.failure(error);
        known = {};
      } finally {
        client.release();
      }
      return known;
    },
    async update(change) {
      known = await changeTeamDocument(sql, { namespace, baseUrl }, LEARNED_DOCUMENT, (stored) => {
        const next = change(parse(JSON.parse(stored)));
        return { document: JSON.stringify(next), result: next };
      });
      return known;
    },
  };
}
