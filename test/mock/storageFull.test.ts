import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEMO_API_KEYS } from '../../src/mock/seed';
import { createMockServer, type MockServer } from '../../src/mock/server';
import { send } from '../helpers/mock';

/**
 * A full disk under `--data-dir`, injected at the seams every file of the mock is written through
 * (`writeFileAtomically`, `stageFileAtomically` that it is made of, and `appendToFile` for the
 * journal): no disk is filled.
 */
const disk = vi.hoisted(() => ({ failWith: undefined as string | undefined }));
vi.mock('../../src/lib/files', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/lib/files')>();
  const full = () => Promise.reject(Object.assign(new Error(`${disk.failWith}: no space left on device, write`), { code: disk.failWith, errno: -28, syscall: 'write' }));
  return {
    ...actual,
    writeFileAtomically: (...args: Parameters<typeof actual.writeFileAtomically>) => (disk.failWith === undefined ? actual.writeFileAtomically(...args) : full()),
    // A reset stages a snapshot (src/mock/persistence.ts), so the disk fills there too.
    stageFileAtomically: (...args: Parameters<typeof actual.stageFileAtomically>) => (disk.failWith === undefined ? actual.stageFileAtomically(...args) : full()),
    // Every other write appends to the journal (src/mock/journal.ts).
    appendToFile: (...args: Parameters<typeof actual.appendToFile>) => (disk.failWith === undefined ? actual.appendToFile(...args) : full()),
  };
});

const opened: MockServer[] = [];
afterEach(async () => {
  disk.failWith = undefined;
  await Promise.all(opened.splice(0).map((server) => server.close()));
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
    const dataDir = await mkdtemp(join(tmpdir(), 'taxprep-full-'));
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
    const dataDir = await mkdtemp(join(tmpdir(), 'taxprep-full-'));
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
