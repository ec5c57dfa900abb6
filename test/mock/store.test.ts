import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DirectoryBlobStore } from '../../src/mock/blobStore';
import { BlobTooLargeError, type MockStore } from '../../src/mock/deps';
import { parseFixture, stateFromFixture, type Fixture } from '../../src/mock/fixture';
import { DEMO_FIXTURE } from '../../src/mock/seed';
import { createCommitQueue, loadDataDir, removeStateLeftovers, writeDataDirState } from '../../src/mock/persistence';
import { DataDirError, openStore } from '../../src/mock/store';

const SMALL_FIXTURE: Fixture = parseFixture({
  partners: [{ id: 1, name: 'Solo', api_keys: [{ key: 'tpk_testKeySolo00000000000001', label: 'main' }] }],
  accounts: [{ id: 3, partner_id: 1, email: 'solo@example.com', first_name: 'Sol', last_name: 'O' }],
  documents: [{ id: 4, account_id: 3, filename: 'a.txt', tax_year: 2025, content: 'seeded' }],
});

const open: MockStore[] = [];
async function openTracked(options: Parameters<typeof openStore>[0]): Promise<MockStore> {
  const store = await openStore(options);
  open.push(store);
  return store;
}
const closeAll = () => Promise.all(open.splice(0).map((store) => store.close()));
afterEach(closeAll);

const directoryOf = (store: MockStore) => (store.blobs as DirectoryBlobStore).directory;
const readBlob = (store: MockStore, blob: string) => text(store.blobs.read(blob));

/** A stream that sends `chunks` and then fails, as a client that drops the connection mid-upload. */
function abortedUpload(chunks: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent < chunks) {
        sent += 1;
        this.push(Buffer.alloc(1024, 'x'));
      } else this.destroy(new Error('connection reset'));
    },
  });
}

describe('in-memory store', () => {
  it('starts from the fixture, with the seed documents readable', async () => {
    const store = await openTracked({ fixture: DEMO_FIXTURE });
    expect(store.state.accounts.map((account) => account.id)).toContain(1001);
    const document = store.state.documents.find((candidate) => candidate.id === 7001)!;
    const content = await readBlob(store, document.blob);
    expect(content).toContain('W-2 2024');
    expect(Buffer.byteLength(content)).toBe(document.file_size);
  });

  it('hands out ids after the fixture, never twice', async () => {
    const store = await openTracked({ fixture: SMALL_FIXTURE });
    expect([store.nextId('account'), store.nextId('account'), store.nextId('document')]).toEqual([4, 5, 5]);
  });

  it('writes and reads a blob, accepting exactly the limit', async () => {
    const store = await openTracked({ fixture: SMALL_FIXTURE });
    const { blob, size } = await store.blobs.write(Readable.from([Buffer.from('hello '), Buffer.from('world')]), 11);
    expect(size).toBe(11);
    expect(await readBlob(store, blob)).toBe('hello world');
    await store.blobs.remove(blob);
    expect(existsSync(join(directoryOf(store), blob))).toBe(false);
  });

  it('refuses a blob over the limit and leaves no file behind', async () => {
    const store = await openTracked({ fixture: SMALL_FIXTURE });
    const before = await readdir(directoryOf(store));
    await expect(store.blobs.write(Readable.from([Buffer.alloc(8), Buffer.alloc(8)]), 12)).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await readdir(directoryOf(store))).toEqual(before);
  });

  it('leaves no file behind when the upload is aborted', async () => {
    const store = await openTracked({ fixture: SMALL_FIXTURE });
    const before = await readdir(directoryOf(store));
    await expect(store.blobs.write(abortedUpload(3), 1_000_000)).rejects.toThrow('connection reset');
    expect(await readdir(directoryOf(store))).toEqual(before);
  });

  it('refuses a blob name that is a path', async () => {
    const store = await openTracked({ fixture: SMALL_FIXTURE });
    expect(() => store.blobs.read('../state.json')).toThrow('invalid blob name');
  });

  it('resets to the fixture: records, uploads removed, seed documents rewritten, a new signing secret', async () => {
    const store = await openTracked({ fixture: SMALL_FIXTURE });
    const { signingSecret } = store.state;
    const upload = await store.blobs.write(Readable.from([Buffer.from('upload')]), 100);
    store.state.documents.push({ ...store.state.documents[0]!, id: store.nextId('document'), blob: upload.blob });
    store.state.accounts[0]!.status = 'suspended';
    store.state.clockOffsetMs = 60_000;

    await store.reset();

    expect(store.state.accounts[0]!.status).toBe('active');
    expect(store.state.documents.map((document) => document.id)).toEqual([4]);
    expect(store.state.nextIds.document).toBe(5);
    expect(store.state.clockOffsetMs).toBe(0);
    expect(store.state.signingSecret).not.toBe(signingSecret);
    expect(await readBlob(store, store.state.documents[0]!.blob)).toBe('seeded');
    expect(await readdir(directoryOf(store))).toEqual([store.state.documents[0]!.blob]);
  });

  it('removes its temporary directory on close', async () => {
    const store = await openStore({ fixture: SMALL_FIXTURE });
    const directory = directoryOf(store);
    expect(existsSync(directory)).toBe(true);
    await store.close();
    expect(existsSync(directory)).toBe(false);
  });

  it('keeps its files in a temporary directory named after it, which a killed mock leaves for the operator to recognise', async () => {
    const store = await openTracked({ fixture: SMALL_FIXTURE });
    expect(directoryOf(store).startsWith(join(tmpdir(), 'taxprep-mock-'))).toBe(true);
  });

  it('closes cleanly when its temporary directory was already removed (a tmp cleaner)', async () => {
    const store = await openStore({ fixture: SMALL_FIXTURE });
    await rm(directoryOf(store), { recursive: true });
    await expect(store.close()).resolves.toBeUndefined();
  });
});

describe('data-dir store', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'taxprep-store-test-'));
  });
  afterEach(async () => {
    await closeAll();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The state on disk, as the next start-up reads it (snapshot and journal). */
  const savedState = async () =>
    (
      await loadDataDir(
        dataDir,
        () => Promise.reject(new Error('no saved state')),
        () => {},
      )
    ).state;
  const STATE_FILES = ['blobs', 'lock', 'state.journal', 'state.snapshot'];

  it('keeps state and uploads across a restart, and the saved state wins over the fixture', async () => {
    const first = await openStore({ fixture: SMALL_FIXTURE, dataDir });
    const upload = await first.blobs.write(Readable.from([Buffer.from('kept')]), 100);
    first.state.documents.push({ ...first.state.documents[0]!, id: first.nextId('document'), blob: upload.blob });
    first.state.accounts[0]!.status = 'completed';
    await first.commit();
    await first.close();

    const second = await openTracked({ fixture: DEMO_FIXTURE, dataDir });
    expect(second.state.accounts.map((account) => [account.id, account.status])).toEqual([[3, 'completed']]);
    expect(await readBlob(second, upload.blob)).toBe('kept');
    expect(second.nextId('document')).toBe(6);
  });

  it('keeps the state, the lock and uploaded files readable by their owner only', async () => {
    const dataDir2 = join(dataDir, 'new-data-dir');
    const store = await openTracked({ fixture: SMALL_FIXTURE, dataDir: dataDir2 });
    const upload = await store.blobs.write(Readable.from([Buffer.from('client document')]), 100);
    const modeOf = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);
    expect(await modeOf(join(dataDir2, 'state.snapshot'))).toBe('600');
    expect(await modeOf(join(dataDir2, 'state.journal'))).toBe('600');
    expect(await modeOf(join(dataDir2, 'lock'))).toBe('600');
    expect(await modeOf(join(dataDir2, 'blobs'))).toBe('700');
    expect(await modeOf(join(directoryOf(store), upload.blob))).toBe('600');
  });

  it('saves the first state at once, without keys in full', async () => {
    await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    const raw = await readFile(join(dataDir, 'state.snapshot'), 'utf8');
    expect(JSON.parse(raw.slice(0, raw.indexOf('\n')))).toMatchObject({ format: 'taxprep-mock-snapshot', version: 1, generation: 1 });
    expect(raw).not.toContain('tpk_testKeySolo');
  });

  it('ends with the last state on disk when many commits overlap', async () => {
    const store = await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    const commits: Array<Promise<void>> = [];
    for (let progress = 1; progress <= 50; progress += 1) {
      store.state.accounts[0]!.first_name = `Name ${progress}`;
      commits.push(store.commit());
      if (progress % 7 === 0) await commits.at(-1);
    }
    await Promise.all(commits);
    await closeAll();
    expect((await savedState()).accounts[0]!.first_name).toBe('Name 50');
    expect((await readdir(dataDir)).sort()).toEqual(STATE_FILES.filter((name) => name !== 'lock'));
  });

  it('loads the last committed state after a crash, removing half-written files and orphaned uploads, and keeps an upload made meanwhile', async () => {
    const first = await openStore({ fixture: SMALL_FIXTURE, dataDir });
    first.state.accounts[0]!.last_name = 'Committed';
    await first.commit();
    await first.close();
    // What a crash can leave: a half-written snapshot, a half-written upload, an upload whose record was never committed.
    const committed = await readFile(join(dataDir, 'state.snapshot'), 'utf8');
    await writeFile(join(dataDir, 'state.snapshot.0badc0de.partial'), committed.slice(0, committed.length / 2));
    await writeFile(join(dataDir, 'blobs', '0123456789abcdef0123456789abcdef.1a2b3c4d.partial'), 'half');
    await writeFile(join(dataDir, 'blobs', 'fedcba9876543210fedcba9876543210'), 'orphan');

    const second = await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    // An upload under way, its record not yet committed: not a leftover.
    const meanwhile = await second.blobs.write(Readable.from([Buffer.from('in flight')]), 100);
    expect(second.state.accounts[0]!.last_name).toBe('Committed');
    expect((await readdir(dataDir)).sort()).toEqual(STATE_FILES);
    // Blobs are swept while the store serves: start-up does not wait for a listing of a million files.
    const expected = [second.state.documents[0]!.blob, meanwhile.blob].sort();
    await vi.waitFor(async () => expect((await readdir(join(dataDir, 'blobs'))).sort()).toEqual(expected));
    await closeAll();
    expect((await readdir(join(dataDir, 'blobs'))).sort()).toEqual(expected);
  });

  it.each([
    ['invalid JSON', '{"format": "taxprep-mock-state", "vers', 'a damaged state file (invalid JSON)'],
    ["another program's file", '{"accounts": []}', 'not a state file of the taxprep mock'],
    ['a later version', '{"format": "taxprep-mock-state", "version": 2, "state": {}}', 'written by another version of the mock (state format 2, this one reads 1)'],
    ['a missing collection', '{"format": "taxprep-mock-state", "version": 1, "state": {"partners": []}}', 'a damaged state file (state.apiKeys: '],
  ])('refuses a state file with %s, naming the file, and leaves it alone', async (_, content, expected) => {
    const path = join(dataDir, 'state.json');
    await writeFile(path, content);
    await expect(openStore({ fixture: SMALL_FIXTURE, dataDir })).rejects.toThrow(`${path}: ${expected}`);
    await expect(openStore({ fixture: SMALL_FIXTURE, dataDir })).rejects.toBeInstanceOf(DataDirError);
    expect(await readFile(path, 'utf8')).toBe(content);
    expect(await readdir(dataDir)).not.toContain('lock');
  });

  it('refuses a data directory that another running mock holds, and takes over from a crashed one', async () => {
    await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    // toMatchObject, not toThrow: vitest's rejects.toThrow(message) passes on a rejection with no error at all.
    await expect(openStore({ fixture: SMALL_FIXTURE, dataDir })).rejects.toMatchObject({
      name: 'DataDirError',
      message: `${dataDir}: in use by another mock service (process ${process.pid}); stop it or choose another --data-dir`,
    });
    await closeAll();
    expect(await readdir(dataDir)).not.toContain('lock');
    // A pid above Linux's largest possible one: the process that wrote this lock is gone.
    await writeFile(join(dataDir, 'lock'), JSON.stringify({ pid: 99_999_999, hostname: hostname(), started_at: '2026-11-23T00:00:00Z' }));
    const store = await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    expect(store.state.accounts).toHaveLength(1);
    expect(JSON.parse(await readFile(join(dataDir, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid, hostname: hostname() });
  });

  it('refuses a data directory whose lock another mock has created but not yet written', async () => {
    // What a second mock finds in the instant between the first one's create and its write.
    await writeFile(join(dataDir, 'lock'), '');
    await expect(openStore({ fixture: SMALL_FIXTURE, dataDir })).rejects.toMatchObject({
      name: 'DataDirError',
      message: `${dataDir}: in use by another mock service; stop it or choose another --data-dir`,
    });
    expect(await readFile(join(dataDir, 'lock'), 'utf8')).toBe('');
  });

  it('refuses a --data-dir that is a file, naming it and why', async () => {
    const file = join(dataDir, 'a-file');
    await writeFile(file, 'not a directory');
    await expect(openStore({ fixture: SMALL_FIXTURE, dataDir: file })).rejects.toMatchObject({
      name: 'DataDirError',
      message: `${file}: cannot be used as a data directory (ENOTDIR: not a directory, mkdir '${join(file, 'blobs')}')`,
    });
    expect(await readFile(file, 'utf8')).toBe('not a directory');
  });

  it('opens a directory written whole by writeDataDirState (how the scale bench makes one) as its saved state', async () => {
    const { state } = stateFromFixture(SMALL_FIXTURE, new Date('2026-01-01T00:00:00Z'));
    state.accounts[0]!.last_name = 'Written';
    await writeDataDirState(dataDir, state);
    expect((await readdir(dataDir)).sort()).toEqual(['state.journal', 'state.snapshot']);
    const store = await openTracked({ fixture: DEMO_FIXTURE, dataDir });
    expect(store.state.accounts.map((account) => [account.id, account.last_name])).toEqual([[3, 'Written']]);
  });

  it('removes only its own interrupted writes at start-up: the files of others, and the backup of a conversion, stay', async () => {
    const ours = ['state.snapshot.1a2b.partial', 'state.journal.3c4d.partial', 'state.json.5e6f.partial'];
    const others = ['state.json.bak', 'notes.partial', 'state.snapshot.old', 'snapshot.partial'];
    for (const name of [...ours, ...others]) await writeFile(join(dataDir, name), name);
    await removeStateLeftovers(dataDir);
    expect((await readdir(dataDir)).sort()).toEqual([...others].sort());
  });

  it('stops its sweep of leftovers at close, touches nothing after it, and the next start-up sweeps the rest', async () => {
    const first = await openStore({ fixture: SMALL_FIXTURE, dataDir });
    await first.close();
    // Uploads whose commit a crash prevented: blobs no record refers to.
    const orphans = Array.from({ length: 300 }, (_, index) => `orphan-${index}`);
    for (const name of orphans) await writeFile(join(dataDir, 'blobs', name), name);
    const orphansLeft = async () => (await readdir(join(dataDir, 'blobs'))).filter((name) => name.startsWith('orphan-')).length;

    // Closed at once: a directory of a million files does not hold up a stop.
    const store = await openStore({ fixture: SMALL_FIXTURE, dataDir });
    await store.close();
    const left = await orphansLeft();
    expect(left).toBeGreaterThan(0);
    // Released means untouched: another mock may own the directory now.
    for (let look = 0; look < 20; look += 1) expect(await orphansLeft()).toBe(left);

    const next = await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    await vi.waitFor(async () => expect(await orphansLeft()).toBe(0));
    expect(await readdir(join(dataDir, 'blobs'))).toEqual([next.state.documents[0]!.blob]);
  });

  it('releases every file it held when it closes', async () => {
    // The process's open descriptors (Linux and macOS alike).
    const openFiles = async () => (await readdir('/dev/fd')).length;
    const cycle = async () => {
      const store = await openStore({ fixture: SMALL_FIXTURE, dataDir });
      store.state.accounts[0]!.last_name = 'Cycled';
      await store.commit();
      await store.close();
    };
    // The first cycle may open what the process keeps for good (a thread pool's files, say).
    await cycle();
    const before = await openFiles();
    for (let round = 0; round < 3; round += 1) await cycle();
    expect(await openFiles()).toBeLessThanOrEqual(before);
  });

  it("writes nothing when closed a second time: the directory may be another mock's by then", async () => {
    const first = await openStore({ fixture: SMALL_FIXTURE, dataDir });
    await first.close();
    const second = await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    second.state.accounts[0]!.last_name = 'Second';
    await second.commit();
    const files = async () => Promise.all(['state.snapshot', 'state.journal', 'lock'].map((name) => readFile(join(dataDir, name), 'utf8')));
    const before = await files();
    first.state.accounts[0]!.last_name = 'AfterClose';
    await first.close();
    expect(await files()).toEqual(before);
  });

  it('saves on close a change that no commit saved', async () => {
    const first = await openStore({ fixture: SMALL_FIXTURE, dataDir });
    first.state.accounts[0]!.last_name = 'Uncommitted';
    await first.close();
    expect((await savedState()).accounts[0]!.last_name).toBe('Uncommitted');
    const second = await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    expect(second.state.accounts[0]!.last_name).toBe('Uncommitted');
  });

  it('keeps the saved state, in memory too, when a reset cannot be saved, and removes the new seed files', async () => {
    const store = await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    store.state.accounts[0]!.status = 'suspended';
    await store.commit();
    const savedBlobs = await readdir(join(dataDir, 'blobs'));
    // The snapshot becomes a directory: the rename that puts the reset's snapshot in place fails.
    await rm(join(dataDir, 'state.snapshot'));
    await mkdir(join(dataDir, 'state.snapshot', 'occupied'), { recursive: true });
    await expect(store.reset()).rejects.toThrow();
    expect(store.state.accounts[0]!.status).toBe('suspended');
    expect(await readdir(join(dataDir, 'blobs'))).toEqual(savedBlobs);
    await rm(join(dataDir, 'state.snapshot'), { recursive: true });
  });

  it('resets to the fixture on disk too, removing uploads', async () => {
    const first = await openStore({ fixture: SMALL_FIXTURE, dataDir });
    const upload = await first.blobs.write(Readable.from([Buffer.from('gone')]), 100);
    first.state.documents.push({ ...first.state.documents[0]!, id: first.nextId('document'), blob: upload.blob });
    first.state.accounts[0]!.status = 'suspended';
    await first.commit();
    await first.reset();
    await first.close();

    const second = await openTracked({ fixture: SMALL_FIXTURE, dataDir });
    expect(second.state.accounts[0]!.status).toBe('active');
    expect(second.state.documents).toHaveLength(1);
    expect(await readdir(join(dataDir, 'blobs'))).toEqual([second.state.documents[0]!.blob]);
    expect(await readBlob(second, second.state.documents[0]!.blob)).toBe('seeded');
  });
});

describe('commit queue', () => {
  it('runs one write at a time and lets commits that wait share the next write', async () => {
    let running = 0;
    let mostAtOnce = 0;
    let writes = 0;
    const { commit, settled } = createCommitQueue(async () => {
      running += 1;
      writes += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running -= 1;
    });
    const first = commit();
    await Promise.resolve();
    await Promise.resolve();
    // The first write is under way; these ten wait for it and then share one write.
    await Promise.all([first, ...Array.from({ length: 10 }, () => commit())]);
    await settled();
    expect({ writes, mostAtOnce }).toEqual({ writes: 2, mostAtOnce: 1 });
  });

  it('is settled only once the write under way and the one waiting for it are both done', async () => {
    const writes: Array<() => void> = [];
    const { commit, settled } = createCommitQueue(() => new Promise<void>((resolve) => writes.push(resolve)));
    const flush = async () => {
      for (let tick = 0; tick < 10; tick += 1) await Promise.resolve();
    };
    void commit();
    void commit();
    let done = false;
    void settled().then(() => {
      done = true;
    });
    await flush();
    expect({ writes: writes.length, done }).toEqual({ writes: 1, done: false });
    writes[0]!();
    await flush();
    expect({ writes: writes.length, done }).toEqual({ writes: 2, done: false });
    writes[1]!();
    await flush();
    expect(done).toBe(true);
  });

  it('keeps committing after a failed write', async () => {
    let calls = 0;
    const { commit } = createCommitQueue(async () => {
      calls += 1;
      if (calls === 1) throw new Error('disk full');
    });
    await expect(commit()).rejects.toThrow('disk full');
    await expect(commit()).resolves.toBeUndefined();
  });

  it('fails the commits that waited for a failed write, unwritten: their changes were made before it failed', async () => {
    let writes = 0;
    const { commit } = createCommitQueue(async () => {
      writes += 1;
      await Promise.resolve();
      if (writes === 1) throw new Error('disk full');
    });
    const failing = commit();
    const waiting = [commit(), commit()];
    await expect(failing).rejects.toThrow('disk full');
    for (const commitment of waiting) await expect(commitment).rejects.toThrow('disk full');
    expect(writes).toBe(1);
  });
});
