import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_API_KEYS } from '../../src/mock/seed';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/**
 * `taxprep serve --mock --data-dir` killed with SIGKILL while writes are in flight, again and
 * again: after every restart each write it acknowledged (every 201) must be there. Writes are
 * account creations (a journal record) and document uploads (a journal record and a blob file).
 */

const KILLS = 50;
const WRITERS = 8;
/** Acknowledged writes to wait for before the kill, so that it lands among writes in flight. */
const ACKS_BEFORE_KILL = 6;

interface Acknowledged {
  kind: 'account' | 'document';
  id: number;
  /** What the record must still say: the account's email, or the document's description. */
  mark: string;
}

let dataDir: string;
let mock: ServedMock | undefined;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'taxprep-crash-'));
});
afterAll(async () => {
  // A failed round leaves its server running: end it before removing its directory.
  mock?.process.kill('SIGKILL');
  await mock?.process;
  await rm(dataDir, { recursive: true, force: true });
});

const authorization = { authorization: `Bearer ${DEMO_API_KEYS.acme}` };

/** One write; resolves to what it created when the mock acknowledged it, or undefined when the kill cut it off. */
async function write(mock: ServedMock, round: number, serial: number): Promise<Acknowledged | undefined> {
  const mark = `crash-r${round}-w${serial}`;
  try {
    if (serial % 4 === 3) {
      const form = new FormData();
      form.set('tax_year', '2024');
      form.set('description', mark);
      form.set('file', new Blob([`${mark}\n`.repeat(200)], { type: 'text/plain' }), `${mark}.txt`);
      const response = await fetch(`${mock.baseUrl}/accounts/1001/documents`, { method: 'POST', headers: authorization, body: form });
      return response.status === 201 ? { kind: 'document', id: ((await response.json()) as { id: number }).id, mark } : undefined;
    }
    const response = await fetch(`${mock.baseUrl}/accounts`, {
      method: 'POST',
      headers: { ...authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `${mark}@example.com`, first_name: 'Crash', last_name: 'Test' }),
    });
    return response.status === 201 ? { kind: 'account', id: ((await response.json()) as { id: number }).id, mark: `${mark}@example.com` } : undefined;
  } catch {
    return undefined;
  }
}

/** Writers that keep writing until the process dies; resolves to every write acknowledged. */
async function writeUntilKilled(mock: ServedMock, round: number): Promise<Acknowledged[]> {
  const acknowledged: Acknowledged[] = [];
  let serial = 0;
  let alive = true;
  let killed: () => void = () => {};
  const enoughAcks = new Promise<void>((resolve) => (killed = resolve));
  const writer = async () => {
    while (alive) {
      const written = await write(mock, round, (serial += 1));
      if (!written) return;
      acknowledged.push(written);
      if (acknowledged.length >= ACKS_BEFORE_KILL) killed();
    }
  };
  const writers = Array.from({ length: WRITERS }, writer);
  await enoughAcks;
  mock.process.kill('SIGKILL');
  await mock.process;
  alive = false;
  await Promise.all(writers);
  return acknowledged;
}

async function missing(mock: ServedMock, writes: Acknowledged[]): Promise<Acknowledged[]> {
  const lost: Acknowledged[] = [];
  for (const written of writes) {
    const response = await fetch(`${mock.baseUrl}/${written.kind === 'account' ? 'accounts' : 'documents'}/${written.id}`, { headers: authorization });
    const record = response.status === 200 ? ((await response.json()) as { email?: string; description?: string }) : undefined;
    if ((written.kind === 'account' ? record?.email : record?.description) !== written.mark) lost.push(written);
  }
  return lost;
}

describe(`taxprep serve --mock --data-dir, SIGKILLed ${KILLS} times mid-write`, () => {
  it('keeps every write it acknowledged', async () => {
    const args = ['--data-dir', dataDir, '--rate-limit', 'off'];
    const everyWrite: Acknowledged[] = [];
    mock = await startServeMock(args);
    for (let round = 1; round <= KILLS; round += 1) {
      const acknowledged = await writeUntilKilled(mock, round);
      expect(acknowledged.length).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);
      everyWrite.push(...acknowledged);
      mock = await startServeMock(args);
      expect(await missing(mock, acknowledged), `lost after kill ${round}`).toEqual([]);
    }
    expect(await missing(mock, everyWrite)).toEqual([]);
    expect(await mock.stop()).toBe(0);
    mock = undefined;
    console.log(`crash: ${KILLS} SIGKILLs, ${everyWrite.length} acknowledged writes, 0 lost`);
  }, 90_000);
});
