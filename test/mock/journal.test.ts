import { copyFile, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { trackState } from '../../src/mock/changes';
import type { MockStore } from '../../src/mock/deps';
import { parseFixture, stateFromFixture, type Fixture } from '../../src/mock/fixture';
import { DataDirError, openStore } from '../../src/mock/store';
import type { MockState } from '../../src/mock/state';

const FIXTURE: Fixture = parseFixture({
  partners: [{ id: 1, name: 'Solo', api_keys: [{ key: 'tpk_testKeySolo00000000000001', label: 'main' }] }],
  accounts: [
    { id: 3, partner_id: 1, email: 'solo@example.com', first_name: 'Sol', last_name: 'O' },
    { id: 4, partner_id: 1, email: 'duo@example.com', first_name: 'Du', last_name: 'O' },
  ],
});

let dataDir: string;
const opened: MockStore[] = [];
const openDir = async (options: { onNotice?: (line: string) => void } = {}) => {
  const store = await openStore({ fixture: FIXTURE, dataDir, ...options });
  opened.push(store);
  return store;
};
const closeAll = () => Promise.all(opened.splice(0).map((store) => store.close()));
const journal = () => join(dataDir, 'state.journal');
const snapshot = () => join(dataDir, 'state.snapshot');

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'taxprep-journal-test-'));
});
afterEach(async () => {
  await closeAll();
  await rm(dataDir, { recursive: true, force: true });
});

/** Opens the directory, makes each change and commits it, and closes. */
async function commitEach(...changes: Array<(state: MockState) => void>): Promise<void> {
  const store = await openDir();
  for (const change of changes) {
    change(store.state);
    await store.commit();
  }
  await closeAll();
}

describe('the journal of a data directory', () => {
  it('appends each write to the journal and leaves the snapshot as it was', async () => {
    await commitEach(() => {});
    const before = { snapshot: await readFile(snapshot()), journal: (await stat(journal())).size };
    await commitEach((state) => {
      state.accounts[0]!.first_name = 'Changed';
    });
    expect(await readFile(snapshot())).toEqual(before.snapshot);
    const grown = (await stat(journal())).size - before.journal;
    // One record: the account changed and the scalars, a few hundred bytes, not the whole state.
    expect(grown).toBeGreaterThan(12);
    expect(grown).toBeLessThan(600);
    const store = await openDir();
    expect(store.state.accounts.map((account) => account.first_name)).toEqual(['Changed', 'Du']);
  });

  it('replays appended, changed, removed and replaced records in order', async () => {
    await commitEach(
      (state) => {
        state.accounts.push({ ...state.accounts[0]!, id: 9, email: 'new@example.com' });
        state.accounts[1]!.status = 'suspended';
      },
      (state) => {
        state.accounts.splice(0, 1);
        state.accounts[1]!.last_name = 'After';
        state.outbox = [];
        state.clockOffsetMs = 5000;
      },
    );
    const store = await openDir();
    expect(store.state.accounts.map((account) => [account.id, account.status, account.last_name])).toEqual([
      [4, 'suspended', 'O'],
      [9, 'active', 'After'],
    ]);
    expect(store.state.clockOffsetMs).toBe(5000);
  });

  it('drops a last record that a crash cut short or left as zeros, keeps every whole one, and appends after them', async () => {
    await commitEach(
      (state) => {
        state.accounts[0]!.first_name = 'Kept';
      },
      (state) => {
        state.accounts[1]!.first_name = 'Torn';
      },
    );
    const whole = (await stat(journal())).size;
    await truncate(journal(), whole - 5);
    let store = await openDir();
    expect(store.state.accounts.map((account) => account.first_name)).toEqual(['Kept', 'Du']);
    store.state.accounts[1]!.first_name = 'Again';
    await store.commit();
    await closeAll();
    // Zeros where a record's bytes never reached the disk.
    await writeFile(journal(), Buffer.alloc(300), { flag: 'a' });
    store = await openDir();
    expect(store.state.accounts.map((account) => account.first_name)).toEqual(['Kept', 'Again']);
  });

  it('refuses a journal damaged before its last record, naming it, and leaves it alone', async () => {
    await commitEach(
      (state) => {
        state.accounts[0]!.first_name = 'First';
      },
      (state) => {
        state.accounts[1]!.first_name = 'Second';
      },
    );
    const bytes = await readFile(journal());
    const header = bytes.readUInt32LE(0) + 12;
    // A byte of the first change's payload: its record is whole but fails its check, and another follows it.
    bytes[header + 12 + 3]! ^= 0xff;
    await writeFile(journal(), bytes);
    const failure = openStore({ fixture: FIXTURE, dataDir });
    await expect(failure).rejects.toBeInstanceOf(DataDirError);
    await expect(openStore({ fixture: FIXTURE, dataDir })).rejects.toThrow(
      `${journal()}: a damaged journal (a damaged record at byte ${header}, before the last one); move it away or choose another --data-dir`,
    );
    expect(await readFile(journal())).toEqual(bytes);
  });

  it('refuses a snapshot cut short, naming it', async () => {
    await commitEach(() => {});
    const size = (await stat(snapshot())).size;
    await truncate(snapshot(), size - 10);
    await expect(openStore({ fixture: FIXTURE, dataDir })).rejects.toThrow(`${snapshot()}: a damaged snapshot (its last line is cut short); move it away or choose another --data-dir`);
  });

  it('refuses a snapshot naming a field no record can have (such as __proto__), naming it', async () => {
    await commitEach(() => {});
    const [head, first, ...rest] = (await readFile(snapshot(), 'utf8')).trimEnd().split('\n');
    for (const odd of ['__proto__', 'first name']) {
      const [name, [[fields, rows], ...runs]] = JSON.parse(first!);
      const damaged = JSON.stringify([name, [[[odd, ...fields.slice(1)], rows], ...runs]]);
      await writeFile(snapshot(), [head, damaged, ...rest].join('\n') + '\n');
      await expect(openStore({ fixture: FIXTURE, dataDir })).rejects.toThrow(
        `${snapshot()}: a damaged snapshot (it names a field ${JSON.stringify(odd)}, which no record has); move it away or choose another --data-dir`,
      );
    }
  });

  it('makes a new snapshot once the journal is past its bound, and ignores the journal of the older one', async () => {
    const big = 'x'.repeat(200_000);
    const store = await openDir();
    const journalOfFirst = join(dataDir, 'first-journal');
    for (let round = 1; round <= 45; round += 1) {
      store.state.accounts[0]!.last_name = `${round}${big}`;
      await store.commit();
      if (round === 1) await copyFile(journal(), journalOfFirst);
    }
    await closeAll();
    const [head, ...batches] = (await readFile(snapshot(), 'utf8')).trimEnd().split('\n');
    expect(JSON.parse(head!)).toMatchObject({ generation: 2 });
    expect((await stat(journal())).size).toBeLessThan(4 * 1024 * 1024);
    expect((await openDir()).state.accounts[0]!.last_name.startsWith('45x')).toBe(true);
    await closeAll();
    // What a crash between the new snapshot and its new journal leaves: the journal of generation 1, whose changes the snapshot holds.
    // A batch line: [list, [[fields, rows]]].
    const [, [[fields, rows]]] = batches.map((line) => JSON.parse(line) as [string, Array<[string[], unknown[][]]>]).find(([name]) => name === 'accounts')! as [string, [[string[], unknown[][]]]];
    const inSnapshot = rows[0]![fields.indexOf('last_name')] as string;
    await copyFile(journalOfFirst, journal());
    await rm(journalOfFirst);
    const reopened = await openDir();
    expect(reopened.state.accounts[0]!.last_name).toBe(inSnapshot);
    expect(Number.parseInt(inSnapshot, 10)).toBeGreaterThan(1);
  });

  it('converts the state.json of an earlier version once, keeping it as state.json.bak and saying so', async () => {
    const { state } = stateFromFixture(FIXTURE, new Date('2026-01-01T00:00:00Z'));
    state.accounts[0]!.last_name = 'FromStateJson';
    const old = JSON.stringify({ format: 'taxprep-mock-state', version: 1, state });
    await writeFile(join(dataDir, 'state.json'), old);
    const notices: string[] = [];
    const store = await openDir({ onNotice: (line) => notices.push(line) });
    expect(store.state.accounts[0]!.last_name).toBe('FromStateJson');
    expect(notices).toEqual([`converted ${join(dataDir, 'state.json')} to a snapshot and journal; the old file is kept as ${join(dataDir, 'state.json.bak')}`]);
    expect(await readFile(join(dataDir, 'state.json.bak'), 'utf8')).toBe(old);
    await closeAll();
    expect((await readdir(dataDir)).sort()).toEqual(['blobs', 'state.journal', 'state.json.bak', 'state.snapshot']);
    const again: string[] = [];
    const reopened = await openDir({ onNotice: (line) => again.push(line) });
    expect(reopened.state.accounts[0]!.last_name).toBe('FromStateJson');
    expect(again).toEqual([]);
  });
});

describe('tracked state', () => {
  const fresh = () => stateFromFixture(FIXTURE, new Date('2026-01-01T00:00:00Z')).state;

  it('hands out what changed since the last take: appended records, changed ones, whole lists, the scalars', () => {
    const tracked = trackState(fresh());
    expect(tracked.changed()).toBe(false);
    tracked.state.accounts.push({ ...tracked.state.accounts[0]!, id: 9 });
    tracked.state.accounts[0]!.status = 'suspended';
    tracked.state.outbox = [];
    tracked.state.nextIds.account = 10;
    expect(tracked.changed()).toBe(true);
    const { changes } = tracked.take();
    expect(changes.lists).toEqual({
      accounts: { appended: [expect.objectContaining({ id: 9 })], changed: [expect.objectContaining({ id: 3, status: 'suspended' })] },
      outbox: { whole: [] },
    });
    expect(changes.scalars.nextIds.account).toBe(10);
    expect(tracked.changed()).toBe(false);
    tracked.state.accounts.splice(0, 1);
    expect(tracked.take().changes.lists).toEqual({ accounts: { whole: [expect.objectContaining({ id: 4 }), expect.objectContaining({ id: 9 })] } });
  });

  it('puts back every change not yet settled, and keeps the settled ones', () => {
    const tracked = trackState(fresh());
    tracked.state.accounts[0]!.first_name = 'Settled';
    const { epoch } = tracked.take();
    tracked.settle(epoch);
    const settled = JSON.stringify(tracked.state);
    tracked.state.accounts[0]!.first_name = 'Taken';
    tracked.state.accounts.push({ ...tracked.state.accounts[0]!, id: 9 });
    tracked.take();
    tracked.state.accounts.splice(0, 1);
    tracked.state.accounts[0]!.last_name = 'Open';
    delete (tracked.state.accounts[0] as Partial<MockState['accounts'][number]>).last_name;
    tracked.state.outbox = [];
    tracked.state.clockOffsetMs = 99;
    tracked.state.simulation = { seed: 1, started_at_ms: 0, steps_done: 0, documents_seen: 0 };
    tracked.rollback();
    expect(JSON.parse(JSON.stringify(tracked.state))).toEqual(JSON.parse(settled));
    expect(tracked.changed()).toBe(false);
  });
});
