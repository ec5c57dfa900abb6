import { LedgerAppender, type LedgerKind, type LinePosition, type LineStore } from '../batch/ledger';
import { OUTBOX, type Delivery } from '../batch/ledgers/outbox';
import { SCHEMA } from './schema';
import { insertLines, kindName, placedRows } from './postgres';
import { fenced, type HeldLease } from '../follow/lease';
import type { TeamScope, TeamSql } from './teamSql';

/**
 * The webhook outbox's lines in a shared store (src/batch/ledger.ts's `LineStore`): one row each,
 * in the order written, among the other ledgers' rows (src/state/postgres.ts), folded by the
 * outbox's own kind (src/batch/ledgers/outbox.ts): this file only persists them. Unlike the other
 * ledgers, which a session lock keeps to one writer, the outbox belongs to the watch lease
 * (src/follow/lease.ts). Only the watch lease's holder writes, each group of lines in one
 * transaction under its fencing token (`fenced`), so a holder paused past a takeover writes
 * nothing when it wakes. A reader (`hooks list`, `status`) reads without the lease.
 */
export function sharedOutboxLines(sql: TeamSql, team: TeamScope, where: string, lease: HeldLease | undefined): LineStore {
  const scope = [team.namespace, team.baseUrl, kindName(OUTBOX)];
  return {
    where,
    async forEachLine<E extends { type: string }>(_kind: LedgerKind, apply: (entry: E, position: LinePosition) => void) {
      const rows = await sql.query<{ entry: E }>(`SELECT entry FROM ${SCHEMA}.ledger_lines WHERE namespace = $1 AND base_url = $2 AND kind = $3 ORDER BY seq`, scope);
      return placedRows(rows.map((row) => row.entry), apply);
    },
    async openAppender(kind, read, live) {
      if (lease === undefined) throw new Error(`the ${kind.label} in ${where} is written only by the holder of the watch lease`);
      const dropped = read.lines - live.count;
      // As the file's: compact when at least 100 rows are superseded, and at least as many as are live.
      const compacted = dropped >= 100 && dropped >= live.count;
      let length = read.completeLength;
      if (compacted) {
        const lines: string[] = [];
        for await (const line of live.lines()) lines.push(line);
        await fenced(sql, team, lease, async (tx) => {
          await tx.query(`DELETE FROM ${SCHEMA}.ledger_lines WHERE namespace = $1 AND base_url = $2 AND kind = $3`, scope);
          await insertLines(tx, scope, lines);
        });
        length = lines.reduce((bytes, line) => bytes + Buffer.byteLength(line), 0);
      }
      // The batch engine's appender and group commit; each group one insert in a transaction of its
      // own under the lease's token (failures come worded by teamSqlOf, a lost lease as itself).
      const sink = {
        write: (_text: string, batch: readonly string[]) => fenced(sql, team, lease, async (tx) => void (await insertLines(tx, scope, batch))),
        sync: async () => undefined,
        close: async () => undefined,
      };
      return { appender: LedgerAppender.onto(where, kind, sink, length), compacted };
    },
  };
}

/**
 * Claims an attempt for this machine before it is sent, under the lease's token: a holder that
 * lost the lease (paused past its expiry) is refused here and sends nothing more; the row says
 * which machine sends which delivery, and which attempt.
 */
export async function claimAttempt(sql: TeamSql, team: TeamScope, lease: HeldLease, delivery: Delivery, attempt: number): Promise<void> {
  await fenced(sql, team, lease, (tx) =>
    tx.query(
      `INSERT INTO taxprep_state.outbox_claims (namespace, base_url, delivery, attempt, claimed_by, fence, claimed_at) VALUES ($1, $2, $3, $4, $5, $6, now())
       ON CONFLICT (namespace, base_url, delivery) DO UPDATE SET attempt = EXCLUDED.attempt, claimed_by = EXCLUDED.claimed_by, fence = EXCLUDED.fence, claimed_at = EXCLUDED.claimed_at`,
      [team.namespace, team.baseUrl, delivery.key, attempt, `${lease.holder.host} (pid ${lease.holder.pid})`, lease.fence],
    ),
  );
}
