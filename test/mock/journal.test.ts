import { readFileSync, statSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { trackState } from '../../src/mock/changes';
import type { MockStore } from '../../src/mock/deps';
import { parseFixture, stateFromFixture, type Fixture } from '../../src/mock/fixture';
import { journalBound } from '../../src/mock/persistence';
import { DataDirError, openStore } from '../../src/mock/store';
import type { MockState } from '../../src/mock/state';

// The commit's crash points, in process: each arrival is handed to the test, which looks at the disk
// at that moment. The kills themselves are proved end to end by test/mock/crashPoints.test.ts.
const crashPoints = vi.hoisted(() => ({ arrived: (_point: string) => {} }));
vi.mock('../../src/lib/crashPoints', () => ({ crashPoint: (point: string) => crashPoints.arrived(point) }));

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
  crashPoints.arrived = () => {};
  await closeAll();
  await rm(dataDir, { recursive: true, force: true });
});

/** The generation of the snapshot on disk, read at once (the header is its first line). */
const generationOnDisk = () => (JSON.parse(readFileSync(snapshot(), 'utf8').split('\n', 1)[0]!) as { generation: number }).generation;

/** What opening the directory is refused with: the user sees the message, after `--data-dir: `. */
const refusal = async () => {
  const error: unknown = await openStore({ fixture: FIXTURE, dataDir }).then(
    (store) => {
      opened.push(store);
      return undefined;
    },
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(DataDirError);
  return { name: (error as Error).name, message: (error as Error).message };
};

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
    // The backup is the user's, not a leftover of an interrupted write: start-up keeps it.
    expect(await readFile(join(dataDir, 'state.json.bak'), 'utf8')).toBe(old);
  });

  it('opens a snapshot whose journal a crash kept from being written, and keeps the writes after it', async () => {
    await commitEach(() => {});
    await rm(journal());
    await commitEach((state) => {
      state.accounts[1]!.first_name = 'AfterIt';
    });
    const store = await openDir();
    expect(store.state.accounts.map((account) => account.first_name)).toEqual(['Sol', 'AfterIt']);
  });

  it('writes nothing for a commit that changed nothing (a read)', async () => {
    const store = await openDir();
    store.state.accounts[0]!.first_name = 'Changed';
    await store.commit();
    const before = { snapshot: await readFile(snapshot()), journal: await readFile(journal()) };
    await store.commit();
    await store.commit();
    expect({ snapshot: await readFile(snapshot()), journal: await readFile(journal()) }).toEqual(before);
  });

  it('lets the journal grow to its bound exactly, and makes a snapshot at the first write past it', async () => {
    const store = await openDir();
    const bound = journalBound((await stat(snapshot())).size);
    expect(bound).toBe(8 * 1024 * 1024);
    let name = 0;
    /** Commits a last name of `length` characters (distinct each time); resolves to how much the journal grew. */
    const commitName = async (length: number) => {
      const before = (await stat(journal())).size;
      name += 1;
      store.state.accounts[0]!.last_name = `${name}`.padEnd(length, 'x');
      await store.commit();
      return (await stat(journal())).size - before;
    };
    // A record is its frame and the change: a fixed part and the name's characters.
    const fixed = (await commitName(10)) - 10;
    while ((await stat(journal())).size + fixed + 1_000_000 < bound) await commitName(1_000_000);
    await commitName(bound - (await stat(journal())).size - fixed);
    expect((await stat(journal())).size).toBe(bound);
    expect(generationOnDisk()).toBe(1);
    // At the bound, not past it: still appended.
    await commitName(10);
    expect(generationOnDisk()).toBe(1);
    expect((await stat(journal())).size).toBe(bound + fixed + 10);
    // Past it: the next write is a snapshot, and the journal starts again.
    await commitName(10);
    expect(generationOnDisk()).toBe(2);
    expect((await stat(journal())).size).toBeLessThan(200);
    await closeAll();
    expect((await openDir()).state.accounts[0]!.last_name).toBe(`${name}`.padEnd(10, 'x'));
  });

  it('bounds the journal by half the snapshot once the snapshot is past 16 MiB, and by 8 MiB below that', () => {
    expect(journalBound(1024)).toBe(8 * 1024 * 1024);
    expect(journalBound(16 * 1024 * 1024)).toBe(8 * 1024 * 1024);
    expect(journalBound(40 * 1024 * 1024)).toBe(20 * 1024 * 1024);
  });

  it('puts its crash points around the moment a write is on disk: an append to the journal, and a new snapshot', async () => {
    const store = await openDir();
    const seen: string[] = [];
    crashPoints.arrived = (point) => seen.push(`${point}: snapshot ${generationOnDisk()}, journal ${statSync(journal()).size} bytes`);
    const journalBefore = (await stat(journal())).size;
    store.state.accounts[0]!.first_name = 'Appended';
    await store.commit();
    const journalAfter = (await stat(journal())).size;
    await store.reset();
    expect(seen).toEqual([
      `mock.before-commit: snapshot 1, journal ${journalBefore} bytes`,
      `mock.after-commit: snapshot 1, journal ${journalAfter} bytes`,
      // A reset is saved as a snapshot: the previous one is in place until the commit, the new one after it.
      `mock.before-commit: snapshot 1, journal ${journalAfter} bytes`,
      `mock.after-commit: snapshot 2, journal ${journalAfter} bytes`,
    ]);
  });

  it.each([
    ['the snapshot', 'state.snapshot'],
    ['the journal', 'state.journal'],
    ['the state file of an earlier version', 'state.json'],
  ])('refuses a directory in place of %s, naming it, and leaves it alone', async (_what, name) => {
    await commitEach(() => {});
    await rm(join(dataDir, name), { force: true });
    await mkdir(join(dataDir, name, 'occupied'), { recursive: true });
    expect(await refusal()).toEqual({
      name: 'DataDirError',
      message: `${join(dataDir, name)}: cannot read the saved state (EISDIR: illegal operation on a directory, read)`,
    });
    expect(await readdir(join(dataDir, name))).toEqual(['occupied']);
  });

  it('refuses a snapshot that cannot even be looked up (a symbolic link to itself), rather than taking the directory for a new one', async () => {
    await commitEach((state) => {
      state.accounts[0]!.first_name = 'Saved';
    });
    await rm(snapshot());
    await symlink(snapshot(), snapshot());
    expect(await refusal()).toEqual({
      name: 'DataDirError',
      message: `${snapshot()}: cannot read the saved state (ELOOP: too many symbolic links encountered, access '${snapshot()}')`,
    });
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
