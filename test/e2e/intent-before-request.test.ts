import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFixture } from '../../src/mock/fixture';
import { connectionConfig } from '../../src/state/connection';
import { makeHome, runCli } from '../helpers/cli';
import { startMock, type RunningMock } from '../helpers/mock';
import { postgresUnavailable, startTestPostgres, type TestPostgres } from '../helpers/postgres';
import { BATCH_KEYS, FIRST_ACCOUNT_ID, batchFixture } from './login-link.fixture';

/**
 * "An intent is committed before its request is sent", for the files and for the shared store,
 * made deterministic: TAXPREP_TEST_HOLD_WRITES holds every durable ledger write back by 400 ms,
 * and a proxy in front of the mock counts, as each write request arrives, the intents the ledger
 * holds. A command that sent without waiting for its intent (`recordIntent` without its `await`)
 * reaches the proxy while the intent is still held back, and the count falls short.
 */

const skippedStore = postgresUnavailable();
let postgres: TestPostgres | undefined;
let mock: RunningMock;
let proxy: Server;
let proxyBase: string;
/** Counts the intents of the ledger in use, set by each test. */
let countIntents: () => Promise<number>;
/** For each write request in order: intents recorded when it arrived. */
let seen: number[] = [];

beforeAll(async () => {
  mock = await startMock({ fixture: parseFixture(batchFixture({ accounts: 3 })), rateLimits: [] });
  const upstream = new URL(mock.baseUrl);
  proxy = createServer((incoming, outgoing) => {
    const relay = () => {
      const out = forward({ host: upstream.hostname, port: upstream.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      incoming.pipe(out);
    };
    if (incoming.method !== 'POST') return relay();
    void countIntents().then((count) => {
      seen.push(count);
      relay();
    });
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  proxyBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${upstream.pathname}`;
  if (skippedStore === undefined) postgres = await startTestPostgres();
});
afterAll(async () => {
  proxy?.close();
  await mock?.close();
  await postgres?.stop();
});
beforeEach(async () => {
  await mock.deps.store.reset();
  seen = [];
});

const ledgerFile = (home: string, name: string) => join(home, '.local', 'share', 'taxprep', name);
const fileIntents = (path: string) => async () => {
  try {
    return readFileSync(path, 'utf8').split('\n').filter((line) => line.includes('"type":"intent"')).length;
  } catch {
    return 0;
  }
};
const storeIntents = (url: string, kind: string) => async () => {
  const client = new pg.Client(connectionConfig(url, process.env));
  await client.connect();
  try {
    return Number((await client.query("SELECT count(*) AS n FROM taxprep_state.ledger_lines WHERE kind = $1 AND entry->>'type' = 'intent'", [kind])).rows[0].n);
  } catch {
    return 0;
  } finally {
    await client.end();
  }
};

/** The three bulk commands, each with the ledger its intents go to and a command line of three writes. */
const COMMANDS = [
  { name: 'login-link', kind: 'login-links', args: () => ['login-link', ...[0, 1, 2].map((offset) => String(FIRST_ACCOUNT_ID + offset)), '--concurrency', '1'] },
  {
    name: 'accounts import',
    kind: 'accounts',
    args: (home: string) => {
      const csv = join(home, 'clients.csv');
      writeFileSync(csv, 'email,first_name,last_name\nheld.one@example.com,Held,One\nheld.two@example.com,Held,Two\nheld.three@example.com,Held,Three\n');
      return ['accounts', 'import', csv, '--concurrency', '1'];
    },
  },
  {
    name: 'docs sync',
    kind: 'documents',
    args: (home: string) => {
      const dir = join(home, 'clients');
      for (const offset of [0, 1, 2]) {
        mkdirSync(join(dir, String(FIRST_ACCOUNT_ID + offset), '2025'), { recursive: true });
        writeFileSync(join(dir, String(FIRST_ACCOUNT_ID + offset), '2025', 'w2.pdf'), `%PDF-1.4 held ${offset}\n`);
      }
      return ['docs', 'sync', dir, '--concurrency', '1'];
    },
  },
] as const;

describe.each([
  ['files', undefined],
  ['the shared store', 'postgres'],
] as const)('with %s, writes held back 400 ms', (_backend, shared) => {
  it.skipIf(shared !== undefined && skippedStore !== undefined).each(COMMANDS)('$name sends each write only once its intent is recorded', async ({ kind, args }) => {
    const home = makeHome();
    if (process.env.PGPASSFILE) writeFileSync(join(home, '.pgpass'), readFileSync(process.env.PGPASSFILE), { mode: 0o600 });
    const url = shared === undefined ? undefined : await postgres!.freshDatabase();
    countIntents = url === undefined ? fileIntents(ledgerFile(home, `${kind}.ndjson`)) : storeIntents(url, kind);
    const result = await runCli(args(home), {
      home,
      env: { TAXPREP_BASE_URL: proxyBase, TAXPREP_API_KEY: BATCH_KEYS.acme, TAXPREP_TEST_HOLD_WRITES: '400', ...(url === undefined ? {} : { TAXPREP_STATE_URL: url }) },
    });
    expect(result.exitCode).toBe(0);
    // Each write request found its own intent (and those before it) on record.
    expect(seen).toEqual([1, 2, 3]);
  });
});
