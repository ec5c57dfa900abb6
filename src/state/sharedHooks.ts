import { UsageError } from '../errors';
import { hooksDocument, parseHooksDocument, type HooksStore } from '../hooks/store';
import { changeTeamDocument, type TeamScope, type TeamSql } from './teamSql';

const HOOKS_DOCUMENT = { table: 'taxprep_state.hooks', column: 'hooks', empty: hooksDocument([]) };

/**
 * The hooks in a shared store: one document per namespace and base URL, the same as the hooks
 * file holds, changed in a transaction that locks its row, so that `hooks disable` on one machine
 * and a watch disabling a hook after a 410 on another never lose each other's change. The hooks
 * of a shared store belong to the namespace, not to a profile: every machine of the team sees
 * them, whatever its profiles are called (their `profile` is null). Their secrets are kept with
 * them, readable by whoever may read the table (docs/team.md says why, and which grants).
 */
export function sharedHooks(sql: TeamSql, scope: TeamScope): HooksStore {
  const damaged = (rule: string) =>
    new UsageError(`the hooks in the shared store are damaged: ${rule}; they were left as they are`, {
      details: { hooks: [rule] },
      hint: 'Restore the taxprep_state.hooks row from a backup of the database, or delete it and add the hooks again (their secrets change).',
    });
  return {
    async read() {
      const rows = await sql.query<{ hooks: string }>('SELECT hooks::text AS hooks FROM taxprep_state.hooks WHERE namespace = $1 AND base_url = $2', [scope.namespace, scope.baseUrl]);
      return rows[0] === undefined ? [] : parseHooksDocument(rows[0].hooks, damaged);
    },
    update(_clock, change) {
      return changeTeamDocument(sql, scope, HOOKS_DOCUMENT, (stored) => {
        const hooks = parseHooksDocument(stored, damaged);
        const result = change(hooks);
        return { document: hooksDocument(hooks), result };
      });
    },
  };
}
