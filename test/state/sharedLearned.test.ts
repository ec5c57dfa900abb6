import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSharedStore } from '../../src/state/postgres';
import { sharedLearned } from '../../src/state/sharedLearned';
import { postgresUnavailable, startTestPostgres, type TestPostgres } from '../helpers/postgres';

/**
 * The rules learned from the service in a shared store (src/state/sharedLearned.ts) against a real
 * PostgreSQL: two machines learning two rules at once keep both, a read never creates the schema,
 * and rules stay apart per namespace and base URL.
 */

const unavailable = postgresUnavailable();
let postgres: TestPostgres | undefined;
const stores: Array<ReturnType<typeof openSharedStore>> = [];
const BASE = 'http://127.0.0.1:9/v1beta';
let url: string;

beforeAll(async () => {
  if (unavailable !== undefined) return;
  postgres = await startTestPostgres();
  url = await postgres.freshDatabase();
});
afterAll(async () => {
  for (const store of stores) await store.close();
  await postgres?.stop();
});

function machine(namespace = 'default', baseUrl = BASE) {
  const store = openSharedStore({ url, source: 'environment', namespace }, baseUrl, process.env);
  stores.push(store);
  return { store, learned: sharedLearned(store) };
}

const rule = <T extends number | string>(value: T, day: string) => ({ value, learned_at: `2026-11-${day}T10:00:00.000Z`, from: 'HTTP 413 X' });

describe.skipIf(unavailable !== undefined)('rules learned, in a shared store', () => {
  it('a read of a store whose schema was never created finds nothing, and creates nothing', async () => {
    const { store, learned } = machine('never-written');
    expect(await learned.read()).toEqual({});
    const client = await store.connectUnchecked();
    try {
      expect((await client.query("SELECT to_regclass('taxprep_state.learned_rules') IS NULL AS missing")).rows[0].missing).toBe(true);
    } finally {
      client.release();
    }
  });

  it('eight machines learning eight rules at once keep all eight; another machine reads them', async () => {
    const first = machine();
    await first.learned.update((known) => ({ ...known, upload_max_bytes: rule(10, '25') }));
    const names = Array.from({ length: 8 }, (_, index) => `projects.filter${index}`);
    const machines = names.map(() => machine());
    // Each machine has read the row before any of them writes: a change applied to a stale read would lose the others'.
    for (const { learned } of machines) await learned.read();
    await Promise.all(machines.map(({ learned }, index) => learned.update((known) => ({ ...known, query_parameters: { ...known.query_parameters, [names[index]!]: rule(`name${index}`, '26') } }))));
    const read = await machine().learned.read();
    expect(read.upload_max_bytes).toEqual(rule(10, '25'));
    expect(Object.keys(read.query_parameters ?? {}).sort()).toEqual(names);
  });

  it('another namespace, or another base URL, sees none of them', async () => {
    await machine().learned.update((known) => ({ ...known, upload_types: { ...rule('x', '27'), value: ['.pdf'] } }));
    expect(await machine('other-team').learned.read()).toEqual({});
    expect(await machine('default', 'http://127.0.0.1:9/v2').learned.read()).toEqual({});
  });
});
