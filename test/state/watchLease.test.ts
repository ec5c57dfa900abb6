import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fenced, keepLease, LeaseLostError, newHolder, releaseLease, renewLease, takeLease, takeoverBoundMs, type HeldLease } from '../../src/follow/lease';
import { openSharedStore } from '../../src/state/postgres';
import { readSharedState, stageSharedPass } from '../../src/state/watchState';
import { teamSqlOf, type TeamScope, type TeamSql } from '../../src/state/teamSql';
import { freshState } from '../../src/follow/state';
import type { Clock } from '../../src/types';
import { postgresUnavailable, startTestPostgres, type TestPostgres } from '../helpers/postgres';

/**
 * The watch lease against a real PostgreSQL: one holder at a time, a takeover only of an expired
 * lease, each takeover raising the fencing token, and every fenced write of an old holder refused.
 */

const unavailable = postgresUnavailable();
let postgres: TestPostgres | undefined;

let store: ReturnType<typeof openSharedStore>;
let sql: TeamSql;
const BASE = 'http://127.0.0.1:9/v1beta';

beforeAll(async () => {
  if (unavailable !== undefined) return;
  postgres = await startTestPostgres();
  store = openSharedStore({ url: await postgres.freshDatabase(), source: 'environment', namespace: 'lease-tests' }, BASE, process.env);
  sql = teamSqlOf(store);
});
afterAll(async () => {
  await store?.close();
  await postgres?.stop();
});

const freshScope = (): TeamScope => ({ namespace: `lease-${randomBytes(4).toString('hex')}`, baseUrl: BASE });
const taken = async (scope: TeamScope, leaseMs: number): Promise<HeldLease> => {
  const result = await takeLease(sql, scope, newHolder('watch'), leaseMs);
  if (!result.taken) throw new Error('the lease was not taken');
  return result.lease;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(unavailable !== undefined)('the watch lease', () => {
  it('is held by one at a time: a second finds the holder, and takes over only once the lease ran out, with a new token', async () => {
    const scope = freshScope();
    const first = await taken(scope, 400);
    expect(first.fence).toBe(1);
    const second = newHolder('watch');
    const refused = await takeLease(sql, scope, second, 400);
    expect(refused).toMatchObject({ taken: false, current: { holder: first.holder } });
    await sleep(450);
    const takeover = await takeLease(sql, scope, second, 400);
    expect(takeover).toMatchObject({ taken: true, lease: { fence: 2, holder: second } });
    // The old holder can neither renew nor write.
    expect(await renewLease(sql, scope, first, 400)).toBe(false);
    await expect(fenced(sql, scope, first, async () => 'written')).rejects.toBeInstanceOf(LeaseLostError);
    await expect(fenced(sql, scope, (takeover as { lease: HeldLease }).lease, async () => 'written')).resolves.toBe('written');
  });

  it('renewed, it outlives its length; released, it is free at once', async () => {
    const scope = freshScope();
    const lease = await taken(scope, 300);
    for (let renewal = 0; renewal < 4; renewal += 1) {
      await sleep(150);
      expect(await renewLease(sql, scope, lease, 300)).toBe(true);
    }
    expect((await takeLease(sql, scope, newHolder('watch'), 300)).taken).toBe(false);
    await releaseLease(sql, scope, lease);
    expect(await takeLease(sql, scope, newHolder('watch'), 300)).toMatchObject({ taken: true, lease: { fence: 2 } });
  });

  it('of two standbys trying at once, exactly one takes it over', async () => {
    const scope = freshScope();
    await taken(scope, 100);
    await sleep(150);
    const tries = await Promise.all(Array.from({ length: 6 }, () => takeLease(sql, scope, newHolder('watch'), 5_000)));
    expect(tries.filter((attempt) => attempt.taken)).toHaveLength(1);
  });

  it("a holder's state write after a takeover is refused, and the successor reads the last state its predecessor recorded", async () => {
    const scope = freshScope();
    const first = await taken(scope, 200);
    const state = freshState(BASE, null, new Date('2026-11-28T05:00:00Z'));
    await (await stageSharedPass(sql, scope, first, { state, changes: [] })).commit();
    const staged = await stageSharedPass(sql, scope, first, { state: { ...state, saved_at: '2026-11-28T06:00:00.000Z' }, changes: [] });
    await sleep(250);
    await taken(scope, 200);
    await expect(staged.commit()).rejects.toBeInstanceOf(LeaseLostError);
    await expect(stageSharedPass(sql, scope, first, { state, changes: [] })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await readSharedState(sql, scope, { reset: false })).toEqual(state);
  });

  it('keepLease says the lease is lost when another took it over', async () => {
    const scope = freshScope();
    const lease = await taken(scope, 300);
    // Paused: no renewal until the lease ran out and another took it.
    await sleep(350);
    await taken(scope, 5_000);
    let lost = false;
    const realClock: Clock = { now: () => new Date(), sleep: (ms, signal) => new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    }) };
    const keeper = keepLease(sql, scope, lease, 300, realClock, () => (lost = true));
    await sleep(200);
    keeper.stop();
    expect(lost).toBe(true);
  });

  it('states its bound as the lease and a standby poll', () => {
    expect(takeoverBoundMs(30_000)).toBe(35_000);
    expect(takeoverBoundMs(3_000)).toBe(3_500);
  });
});
