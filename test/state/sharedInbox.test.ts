import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../../src/batch/ledgers/outbox';
import { newHolder, releaseLease, takeLease, type HeldLease } from '../../src/follow/lease';
import { openSharedStore } from '../../src/state/postgres';
import { sharedInbox } from '../../src/state/sharedInbox';
import { sharedOutboxLines } from '../../src/state/sharedOutbox';
import { teamSqlOf, type TeamScope, type TeamSql } from '../../src/state/teamSql';
import { postgresUnavailable, startTestPostgres, type TestPostgres } from '../helpers/postgres';

/**
 * The shared store's inbox against a real PostgreSQL: a request wakes the listening holder once
 * committed, the listener's connection is closed when it stops, each request is applied once
 * (also after a crash between its lines and its removal), and one being applied cannot be taken
 * back.
 */

const unavailable = postgresUnavailable();
let postgres: TestPostgres | undefined;
let store: ReturnType<typeof openSharedStore>;
let sql: TeamSql;
const BASE = 'http://127.0.0.1:9/v1beta';
const AT = new Date('2026-11-28T10:00:00Z');

beforeAll(async () => {
  if (unavailable !== undefined) return;
  postgres = await startTestPostgres();
  store = openSharedStore({ url: await postgres.freshDatabase(), source: 'environment', namespace: 'inbox-tests' }, BASE, process.env);
  sql = teamSqlOf(store);
});
afterAll(async () => {
  await store?.close();
  await postgres?.stop();
});

const freshScope = (): TeamScope => ({ namespace: `inbox-${randomBytes(4).toString('hex')}`, baseUrl: BASE });

/** The watch lease held, and the outbox open under it with one delivered change, `msg_1` for `hk_a`. */
async function heldOutbox(scope: TeamScope): Promise<{ lease: HeldLease; outbox: Outbox }> {
  const taken = await takeLease(sql, scope, newHolder('watch'), 60_000);
  if (!taken.taken) throw new Error('the lease was not taken');
  const outbox = await Outbox.open(sharedOutboxLines(sql, scope, 'the test store', taken.lease));
  const seenAt = AT.toISOString();
  await outbox.queue([{ id: 'msg_1', event: 'item.appeared', hooks: ['hk_a'], body: '{}', seen_at: seenAt, at: seenAt }]);
  await outbox.recordAttempt({ id: 'msg_1', hook: 'hk_a', attempt: 1, result: 'delivered', detail: 'HTTP 204', at: seenAt });
  return { lease: taken.lease, outbox };
}

const redeliverLines = async (scope: TeamScope) =>
  (await sql.query<{ request: string }>("SELECT entry->>'request' AS request FROM taxprep_state.ledger_lines WHERE namespace = $1 AND base_url = $2 AND kind = 'outbox' AND entry->>'type' = 'redeliver' ORDER BY seq", [scope.namespace, scope.baseUrl])).map((row) => row.request);

/** The server processes of the sessions that listen for requests (their last statement a LISTEN). */
const listeners = async () => (await sql.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN taxprep_hooks_requests_%'")).map((row) => row.pid);
const sessionAlive = async (pid: number) => (await sql.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).length > 0;

async function eventually(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; !(await condition()); tries += 1) {
    if (tries > 100) throw new Error(`never ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(unavailable !== undefined)('the inbox of the shared outbox', () => {
  it('wakes the listening holder when a request is committed, and closes its connection when stopped', async () => {
    const scope = freshScope();
    const inbox = sharedInbox(sql, scope);
    const other = sharedInbox(sql, freshScope());
    const stop = new AbortController();
    const woken: string[] = [];
    const listening = inbox.onRequest(stop.signal, () => woken.push('request'));
    await eventually(async () => (await listeners()).length === 1, 'listened');
    const [session] = await listeners();
    // Another namespace's request wakes nobody here.
    await other.submit({ marks: [], retry_waiting: false }, AT);
    await inbox.submit({ marks: [{ id: 'msg_1', hook: 'hk_a' }], retry_waiting: false }, AT);
    await eventually(() => woken.length > 0, 'woken');
    expect(woken).toEqual(['request']);
    stop.abort();
    await listening;
    // Its connection closed, not put back in the pool still listening.
    await eventually(async () => !(await sessionAlive(session!)), 'closed');
  });

  it('applies each request once, in order, tagged with its id; one left by a crash after its lines is only removed', async () => {
    const scope = freshScope();
    const inbox = sharedInbox(sql, scope);
    const { lease, outbox } = await heldOutbox(scope);
    const first = await inbox.submit({ marks: [{ id: 'msg_1', hook: 'hk_a' }], retry_waiting: false }, AT);
    const second = await inbox.submit({ marks: [{ id: 'msg_1', hook: 'hk_a' }], retry_waiting: false }, new Date(AT.getTime() + 1));
    expect(await inbox.waiting(first)).toBe(true);
    expect(await inbox.applyAll(outbox, AT)).toBe(2);
    expect(await redeliverLines(scope)).toEqual([first, second]);
    expect(await inbox.waiting(first)).toBe(false);
    expect(await inbox.applyAll(outbox, AT)).toBe(0);

    // A crash between the lines and the row's removal: the next holder finds the row again.
    await sql.query('INSERT INTO taxprep_state.hooks_requests (namespace, base_url, id, request, made_at) VALUES ($1, $2, $3, $4::jsonb, now())', [scope.namespace, scope.baseUrl, first, JSON.stringify({ marks: [{ id: 'msg_1', hook: 'hk_a' }], retry_waiting: false })]);
    await outbox.close();
    const reopened = await Outbox.open(sharedOutboxLines(sql, scope, 'the test store', lease));
    expect(await inbox.applyAll(reopened, AT)).toBe(0);
    expect(await redeliverLines(scope)).toEqual([first, second]);
    expect(await inbox.waiting(first)).toBe(false);
    await reopened.close();
    await releaseLease(sql, scope, lease);
  });

  it('is taken back before a holder takes it; while a holder applies it, it cannot be', async () => {
    const scope = freshScope();
    const inbox = sharedInbox(sql, scope);
    const withdrawn = await inbox.submit({ marks: [], retry_waiting: false }, AT);
    expect(await inbox.withdraw(withdrawn)).toBe(true);
    expect(await inbox.waiting(withdrawn)).toBe(false);

    const { lease, outbox } = await heldOutbox(scope);
    const applied = await inbox.submit({ marks: [{ id: 'msg_1', hook: 'hk_a' }], retry_waiting: false }, AT);
    // Taken back in the middle of the holder's application (its lines being written): refused.
    const redeliver = outbox.redeliver.bind(outbox);
    let takenBack: boolean | undefined;
    outbox.redeliver = async (...args) => {
      takenBack = await inbox.withdraw(applied);
      return redeliver(...args);
    };
    expect(await inbox.applyAll(outbox, AT)).toBe(1);
    expect(takenBack).toBe(false);
    expect(await redeliverLines(scope)).toEqual([applied]);
    await outbox.close();
    await releaseLease(sql, scope, lease);
  });

  it('names a watch holding the lease as the running watch, and a hooks command holding it as none', async () => {
    const scope = freshScope();
    const inbox = sharedInbox(sql, scope);
    expect(await inbox.runningWatch()).toBeUndefined();
    const watch = newHolder('watch');
    const held = await takeLease(sql, scope, watch, 60_000);
    expect(await inbox.runningWatch()).toEqual({ host: watch.host, pid: process.pid, started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    await releaseLease(sql, scope, (held as { lease: HeldLease }).lease);
    expect(await inbox.runningWatch()).toBeUndefined();
    await takeLease(sql, scope, newHolder('hooks'), 60_000);
    expect(await inbox.runningWatch()).toBeUndefined();
  });
});
