import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { storageFullReason } from '../../src/mock/persistence';
import { DEMO_API_KEYS, DEMO_FIXTURE } from '../../src/mock/seed';
import { createMockServer, type MockServer } from '../../src/mock/server';
import { openStore } from '../../src/mock/store';
import { send } from '../helpers/mock';

/**
 * A full disk under `--data-dir`, injected at the seams every file of the mock is written through
 * (`writeFileAtomically`, `stageFileAtomically` that it is made of, and `appendToFile` for the
 * journal): no disk is filled.
 */
const disk = vi.hoisted(() => ({
  failWith: undefined as string | undefined,
  /** When set, only writes of files whose name ends with this fail (appends to the journal go on). */
  onlyFile: undefined as string | undefined,
  /** Every file written whole: its path, and whether it was to be flushed to the disk. */
  written: [] as Array<{ path: string; durable: boolean }>,
}));
vi.mock('../../src/lib/files', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/lib/files')>();
  const full = () => Promise.reject(Object.assign(new Error(`${disk.failWith}: no space left on device, write`), { code: disk.failWith, errno: -28, syscall: 'write' }));
  const fails = (path?: string) => disk.failWith !== undefined && (disk.onlyFile === undefined || path?.endsWith(disk.onlyFile) === true);
  return {
    ...actual,
    writeFileAtomically: (...args: Parameters<typeof actual.writeFileAtomically>) => {
      disk.written.push({ path: args[0], durable: args[2].durable });
      return fails(args[0]) ? full() : actual.writeFileAtomically(...args);
    },
    // A reset stages a snapshot (src/mock/persistence.ts), so the disk fills there too.
    stageFileAtomically: (...args: Parameters<typeof actual.stageFileAtomically>) => (fails(args[0]) ? full() : actual.stageFileAtomically(...args)),
    // Every other write appends to the journal (src/mock/journal.ts).
    appendToFile: (...args: Parameters<typeof actual.appendToFile>) => (fails() ? full() : actual.appendToFile(...args)),
  };
});

const opened: MockServer[] = [];
const dataDirs: string[] = [];
const newDataDir = async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'taxprep-full-'));
  dataDirs.push(dataDir);
  return dataDir;
};
afterEach(async () => {
  disk.failWith = undefined;
  disk.onlyFile = undefined;
  disk.written = [];
  await Promise.all(opened.splice(0).map((server) => server.close()));
  await Promise.all(dataDirs.splice(0).map((dataDir) => rm(dataDir, { recursive: true, force: true })));
});

async function start(dataDir: string, logged: { storage: string[]; internal: unknown[] }) {
  const server = await createMockServer({ host: '127.0.0.1', port: 0, dataDir, rateLimits: [], onStorageFull: (line) => logged.storage.push(line), onInternalError: (error) => logged.internal.push(error) });
  opened.push(server);
  return server;
}

const auth = { authorization: `Bearer ${DEMO_API_KEYS.acme}` };
const account = (email: string) => ({ email, first_name: 'Disk', last_name: 'Full' });

describe('a full disk under --data-dir', () => {
  it('answers writes 507 INSUFFICIENT_STORAGE saying so, logs one line each, and keeps every acknowledged write, and nothing else', async () => {
    const dataDir = await newDataDir();
    const logged = { storage: [] as string[], internal: [] as unknown[] };
    const server = await start(dataDir, logged);
    const before = await send(`${server.baseUrl}/accounts`, { method: 'POST', headers: auth, body: account('before@example.com') });
    expect(before.status).toBe(201);

    disk.failWith = 'ENOSPC';
    const refused = await send(`${server.baseUrl}/accounts`, { method: 'POST', headers: auth, body: account('refused@example.com') });
    expect(refused.status).toBe(507);
    expect(refused.json).toEqual({
      error: {
        code: 'INSUFFICIENT_STORAGE',
        message: `The mock could not store the request: the data directory ${dataDir} is full (ENOSPC). Nothing of it was kept; free some space and send it again.`,
      },
    });
    const link = await send(`${server.baseUrl}/accounts/1001/login-link`, { method: 'POST', headers: auth, body: {} });
    expect(link.status).toBe(507);
    expect(logged.storage).toEqual([
      `POST /v1beta/accounts answered 507: the data directory ${dataDir} is full (ENOSPC)`,
      `POST /v1beta/accounts/1001/login-link answered 507: the data directory ${dataDir} is full (ENOSPC)`,
    ]);
    expect(logged.internal).toEqual([]);
    // What was refused is not shown either: the email is free once the disk has room again.
    expect(server.deps.store.state.accounts.map((record) => record.email)).not.toContain('refused@example.com');

    disk.failWith = undefined;
    const after = await send(`${server.baseUrl}/accounts`, { method: 'POST', headers: auth, body: account('refused@example.com') });
    expect(after.status).toBe(201);
    await server.close();
    opened.splice(0);

    const restarted = await start(dataDir, logged);
    const emails = restarted.deps.store.state.accounts.map((record) => record.email);
    expect(emails).toEqual(expect.arrayContaining(['before@example.com', 'refused@example.com']));
    for (const id of [(before.json as { id: number }).id, (after.json as { id: number }).id]) {
      expect((await send(`${restarted.baseUrl}/accounts/${id}`, { headers: auth })).status).toBe(200);
    }
  });

  it('refuses an upload whose file cannot be written, keeping nothing of it', async () => {
    const dataDir = await newDataDir();
    const server = await start(dataDir, { storage: [], internal: [] });
    const documents = server.deps.store.state.documents.length;
    disk.failWith = 'EDQUOT';
    const form = new FormData();
    form.set('tax_year', '2024');
    form.set('file', new Blob(['hello'], { type: 'text/plain' }), 'notes.txt');
    const upload = await fetch(`${server.baseUrl}/accounts/1001/documents`, { method: 'POST', headers: auth, body: form });
    expect(upload.status).toBe(507);
    expect(((await upload.json()) as { error: { message: string } }).error.message).toContain('is over its disk quota (EDQUOT)');
    expect(server.deps.store.state.documents).toHaveLength(documents);
  });
});

describe('the store of a data directory when the disk fails', () => {
  const generationOf = async (dataDir: string) => (JSON.parse((await readFile(join(dataDir, 'state.snapshot'), 'utf8')).split('\n', 1)[0]!) as { generation: number }).generation;

  it('writes a snapshot at the next commit when the journal of the last one could not be started, and keeps every write', async () => {
    const dataDir = await newDataDir();
    const store = await openStore({ fixture: DEMO_FIXTURE, dataDir });
    disk.failWith = 'ENOSPC';
    disk.onlyFile = 'state.journal';
    // The reset's snapshot is saved, so the reset is done (and its documents' files kept); the new journal beside it is not started.
    await expect(store.reset()).resolves.toBeUndefined();
    expect(await generationOf(dataDir)).toBe(2);
    const files = await readdir(join(dataDir, 'blobs'));
    expect(store.state.documents.filter((document) => !files.includes(document.blob))).toEqual([]);
    disk.failWith = undefined;
    store.state.accounts[0]!.last_name = 'AfterTheReset';
    await expect(store.commit()).resolves.toBeUndefined();
    expect(await generationOf(dataDir)).toBe(3);
    store.state.accounts[0]!.first_name = 'Journaled';
    await store.commit();
    expect(await generationOf(dataDir)).toBe(3);
    await store.close();

    const reopened = await openStore({ fixture: DEMO_FIXTURE, dataDir });
    expect([reopened.state.accounts[0]!.first_name, reopened.state.accounts[0]!.last_name]).toEqual(['Journaled', 'AfterTheReset']);
    await reopened.close();
  });

  it('closes without a journal, and without writing anything when everything is saved', async () => {
    const dataDir = await newDataDir();
    const store = await openStore({ fixture: DEMO_FIXTURE, dataDir });
    store.state.accounts[0]!.last_name = 'BeforeTheReset';
    await store.commit();
    disk.failWith = 'ENOSPC';
    disk.onlyFile = 'state.journal';
    await store.reset();
    disk.failWith = undefined;
    const saved = await readFile(join(dataDir, 'state.snapshot'));
    await expect(store.close()).resolves.toBeUndefined();
    expect(await readFile(join(dataDir, 'state.snapshot'))).toEqual(saved);
    expect(await readdir(dataDir)).not.toContain('lock');

    // The journal beside the reset's snapshot is the one before it: start-up ignores it.
    const reopened = await openStore({ fixture: DEMO_FIXTURE, dataDir });
    expect(reopened.state.accounts[0]!.last_name).toBe(DEMO_FIXTURE.accounts[0]!.last_name);
    await reopened.close();
  });

  it('leaves no temporary directory behind when an in-memory store cannot write its seed documents', async () => {
    const temporary = await mkdtemp(join(tmpdir(), 'taxprep-tmp-'));
    vi.stubEnv('TMPDIR', temporary);
    try {
      disk.failWith = 'ENOSPC';
      await expect(openStore({ fixture: DEMO_FIXTURE })).rejects.toMatchObject({ code: 'ENOSPC' });
      expect(await readdir(temporary)).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
      await rm(temporary, { recursive: true, force: true });
    }
  });

  it('flushes every document file of a data directory to the disk before the upload is acknowledged', async () => {
    const dataDir = await newDataDir();
    const server = await start(dataDir, { storage: [], internal: [] });
    const form = new FormData();
    form.set('tax_year', '2024');
    form.set('file', new Blob(['hello'], { type: 'text/plain' }), 'notes.txt');
    const upload = await fetch(`${server.baseUrl}/accounts/1001/documents`, { method: 'POST', headers: auth, body: form });
    expect(upload.status).toBe(201);
    const blobs = disk.written.filter(({ path }) => path.startsWith(join(dataDir, 'blobs')));
    // The seed's documents, and the upload.
    expect(blobs).toHaveLength(DEMO_FIXTURE.documents.length + 1);
    expect(blobs.every(({ durable }) => durable)).toBe(true);
  });
});

describe('storageFullReason', () => {
  it('tells a full disk, a quota and a file too large by the error code, and nothing else', () => {
    expect(storageFullReason(Object.assign(new Error('x'), { code: 'ENOSPC' }))).toBe('is full (ENOSPC)');
    expect(storageFullReason({ code: 'EDQUOT' })).toBe('is over its disk quota (EDQUOT)');
    expect(storageFullReason({ code: 'EFBIG' })).toBe('cannot hold a file that large (EFBIG)');
    for (const other of [{ code: 'EIO' }, { code: 'toString' }, new Error('no code'), null, undefined, 'ENOSPC']) expect(storageFullReason(other)).toBeUndefined();
  });
});
