import { createHash } from 'node:crypto';
import { currentHolder } from '../follow/lease';
import { applyInOrder, requestId, type HooksInbox } from '../hooks/requests';
import { SCHEMA } from './schema';
import type { TeamScope, TeamSql } from './teamSql';

const TABLE = `${SCHEMA}.hooks_requests`;

/**
 * The inbox of the shared outbox (src/hooks/requests.ts's `HooksInbox`): a row per request in
 * `taxprep_state.hooks_requests`, made by a hooks command on any machine and applied by whichever
 * machine holds the watch lease. Each request is committed with a NOTIFY on the namespace's and
 * base URL's channel, which PostgreSQL sends on commit: the holding watch, listening on a
 * connection of its own, is woken only once the row exists, and applies it at once; a watch that
 * cannot listen still takes requests at each pass. The holder applies under row locks (`FOR
 * UPDATE SKIP LOCKED`): a command that takes its request back while the holder applies it finds
 * it taken, and a holder paused mid-application (its rows locked) holds up no other holder, which
 * skips those rows until the paused one's transaction ends.
 */
export function sharedInbox(sql: TeamSql, team: TeamScope): HooksInbox {
  const scope = [team.namespace, team.baseUrl];
  const channel = requestChannel(team);
  return {
    async submit(request, now) {
      const id = requestId(now);
      await sql.query(
        `WITH made AS (INSERT INTO ${TABLE} (namespace, base_url, id, request, made_at) VALUES ($1, $2, $3, $4::jsonb, now()) RETURNING id)
         SELECT pg_notify($5, id) FROM made`,
        [...scope, id, JSON.stringify(request), channel],
      );
      return id;
    },
    async waiting(id) {
      return (await sql.query(`SELECT 1 FROM ${TABLE} WHERE namespace = $1 AND base_url = $2 AND id = $3`, [...scope, id])).length > 0;
    },
    async withdraw(id) {
      const removed = await sql.query(
        `DELETE FROM ${TABLE} WHERE (namespace, base_url, id) IN
           (SELECT namespace, base_url, id FROM ${TABLE} WHERE namespace = $1 AND base_url = $2 AND id = $3 FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [...scope, id],
      );
      return removed.length > 0;
    },
    applyAll(outbox, at) {
      // The rows stay locked until the lines are written and the rows deleted, in one transaction:
      // a crash in between leaves them, and the next holder finds their ids in the outbox.
      return sql.transaction(async (tx) => {
        const rows = await tx.query<{ id: string; request: unknown }>(`SELECT id, request FROM ${TABLE} WHERE namespace = $1 AND base_url = $2 ORDER BY made_at, id FOR UPDATE SKIP LOCKED`, scope);
        return applyInOrder(outbox, rows, at, async (id) => void (await tx.query(`DELETE FROM ${TABLE} WHERE namespace = $1 AND base_url = $2 AND id = $3`, [...scope, id])));
      });
    },
    onRequest: (signal, wake) => sql.listen(channel, signal, wake),
    async runningWatch() {
      const current = await currentHolder(sql, team);
      if (current?.holder.kind !== 'watch') return undefined;
      return { host: current.holder.host, pid: current.holder.pid, started_at: current.taken_at };
    },
  };
}

/** The NOTIFY channel of a namespace and base URL: an identifier (a digest), whatever their text. */
function requestChannel(team: TeamScope): string {
  return `taxprep_hooks_requests_${createHash('sha256').update(`${team.namespace}\n${team.baseUrl}`).digest('hex').slice(0, 24)}`;
}
