import type { LedgerKind, LineAppender, LinePosition, LineStore } from '../batch/ledger';
import { OUTBOX, type Delivery } from '../batch/ledgers/outbox';
import { heldWrite } from '../lib/heldWrites';
import { SCHEMA } from './schema';
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
  const scope = [team.namespace, team.baseUrl, OUTBOX.fileName];
  return {
    where,
    async forEachLine<E extends { type: string }>(_kind: LedgerKind, apply: (entry: E, position: LinePosition) => void) {
      const rows = await sql.query<{ entry: E }>(`SELECT entry FROM ${SCHEMA}.ledger_lines WHERE namespace = $1 AND base_url = $2 AND kind = $3 ORDER BY seq`, scope);
      rows.forEach((row, index) => apply(row.entry, { offset: index, length: 1 }));
      return { lines: rows.length, completeLength: rows.length };
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
        length = lines.length;
      }
      return { appender: new FencedAppender(sql, team, lease, length), compacted };
    },
  };
}

/** Lines (JSON text, one entry each) inserted in order in one statement, as the other shared ledgers' (src/state/postgres.ts). */
function insertLines(tx: TeamSql, scope: readonly string[], lines: readonly string[]): Promise<unknown> {
  return tx.query(
    `INSERT INTO ${SCHEMA}.ledger_lines (namespace, base_url, kind, entry)
     SELECT $1, $2, $3, line::jsonb FROM unnest($4::text[]) WITH ORDINALITY AS given(line, n) ORDER BY n`,
    [...scope, lines.map((line) => line.trimEnd())],
  );
}

/**
 * Lines appended by the lease's holder: queued in order and written in groups, one fenced
 * transaction each (a group commit, as the file's), durable when a waited line's promise resolves.
 * Ends and positions count rows.
 */
class FencedAppender implements LineAppender {
  private queue: Array<{ line: string; waiter: { resolve: () => void; reject: (error: unknown) => void } | undefined }> = [];
  private flushing: Promise<void> | undefined;
  private failure: unknown;
  private queuedEnd: number;
  private writtenEnd: number;

  constructor(
    private readonly sql: TeamSql,
    private readonly team: TeamScope,
    private readonly lease: HeldLease,
    length: number,
  ) {
    this.queuedEnd = length;
    this.writtenEnd = length;
  }

  appendLine(line: string, options: { wait?: boolean } = {}): { position: LinePosition; done: Promise<void> } {
    const position = { offset: this.queuedEnd, length: 1 };
    this.queuedEnd += 1;
    if (options.wait === false) {
      this.queue.push({ line, waiter: undefined });
      this.flushing ??= this.flush();
      return { position, done: Promise.resolve() };
    }
    const done = new Promise<void>((resolve, reject) => {
      this.queue.push({ line, waiter: { resolve, reject } });
      this.flushing ??= this.flush();
    });
    return { position, done };
  }

  holds(end: number): boolean {
    return this.writtenEnd >= end;
  }

  async writtenTo(end: number): Promise<void> {
    while (this.writtenEnd < end && this.flushing !== undefined) await this.flushing;
    if (this.writtenEnd < end) throw this.failure ?? new Error('the webhook outbox of the shared store was not written');
  }

  async close(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    if (this.failure !== undefined) throw this.failure;
  }

  private async flush(): Promise<void> {
    // Lines queued in this tick join the group.
    await undefined;
    while (this.queue.length > 0) {
      const group = this.queue.splice(0);
      try {
        await heldWrite();
        await fenced(this.sql, this.team, this.lease, (tx) => insertLines(tx, [this.team.namespace, this.team.baseUrl, OUTBOX.fileName], group.map((item) => item.line)));
        this.writtenEnd += group.length;
        for (const item of group) item.waiter?.resolve();
      } catch (error) {
        for (const item of group) {
          if (item.waiter === undefined) this.failure ??= error;
          else item.waiter.reject(error);
        }
      }
    }
    this.flushing = undefined;
  }
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
