import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { batchMockPerFile } from '../helpers/batchMock';
import { runMain } from '../helpers/cli';
import { FIRST_ACCOUNT_ID } from '../e2e/login-link.fixture';

/**
 * Ctrl-C in the batch engine, in process and at an exact moment: the mock presses it as it answers
 * the n-th write (`process.emit('SIGINT')` reaches the handler the run installed, and no other:
 * a test worker has none of its own). The run finishes what is in flight, prints it, records it,
 * says what was not sent and exits 130; the next run sends the rest once.
 * test/e2e/docs-sync.test.ts and accounts-import.test.ts press a real Ctrl-C at a moment of the kernel's choosing.
 */

const A = FIRST_ACCOUNT_ID;
/** The write whose answer presses Ctrl-C (1 = the first), and the method and path pattern of the writes counted. */
let pressAt: { count: number; method: string; path: RegExp } | undefined;
const batch = batchMockPerFile({
  accounts: 2,
  onRequest: (request) => {
    if (pressAt === undefined || request.method !== pressAt.method || !pressAt.path.test(request.path)) return;
    pressAt.count -= 1;
    if (pressAt.count === 0) {
      pressAt = undefined;
      process.emit('SIGINT');
    }
  },
});
beforeEach(() => {
  pressAt = undefined;
});
const env = () => batch.env();
const ndjson = (text: string): Array<Record<string, any>> => text.trim().split('\n').map((line) => JSON.parse(line));
const HINT = 'Run the same command again to go on: what was done is not sent again.';

describe('Ctrl-C in a batch', () => {
  it('docs sync: the upload in flight ends and is printed and recorded, the rest counted as not sent; exit 130, the lock freed; the next run sends the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-interrupt-'));
    mkdirSync(join(dir, String(A), '2025'), { recursive: true });
    for (let index = 1; index <= 5; index += 1) writeFileSync(join(dir, String(A), '2025', `doc-${index}.pdf`), `document ${index}`);
    pressAt = { count: 2, method: 'POST', path: /\/documents$/ };
    const stopped = await runMain(['docs', 'sync', dir, '--concurrency', '1'], { env: env(), home: batch.home() });
    expect(stopped.exitCode).toBe(130);
    expect(stopped.stdout.trim().split('\n').map((line) => line.split('\t').slice(0, 2))).toEqual([
      ['uploaded', `${A}/2025/doc-1.pdf`],
      ['uploaded', `${A}/2025/doc-2.pdf`],
    ]);
    expect(stopped.stderr).toMatch(new RegExp(`^error: interrupted: documents: 2 uploaded, 0 skipped, 0 failed, 3 not sent in [^\\n]+\\n${HINT}\\n$`));
    const ledgerPath = join(batch.home(), '.local', 'share', 'taxprep', 'documents.ndjson');
    expect(ndjson(readFileSync(ledgerPath, 'utf8')).filter((entry) => entry.type === 'uploaded').map((entry) => entry.filename)).toEqual(['doc-1.pdf', 'doc-2.pdf']);

    const rest = await runMain(['docs', 'sync', dir], { env: env(), home: batch.home() });
    expect(rest.exitCode).toBe(0);
    expect(rest.stderr).toMatch(/^documents: 3 uploaded, 2 skipped, 0 failed in /);
    expect(batch.mock().deps.store.state.documents.filter((document) => document.account_id === A).map((document) => document.filename).sort()).toEqual(['doc-1.pdf', 'doc-2.pdf', 'doc-3.pdf', 'doc-4.pdf', 'doc-5.pdf']);
  });

  it("docs sync: Ctrl-C while it reads the accounts' lists stops before any upload, and says so", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taxprep-interrupt-'));
    mkdirSync(join(dir, String(A), '2025'), { recursive: true });
    writeFileSync(join(dir, String(A), '2025', 'w2.pdf'), 'w2');
    pressAt = { count: 1, method: 'GET', path: /\/documents\?/ };
    const stopped = await runMain(['docs', 'sync', dir], { env: env(), home: batch.home() });
    expect(stopped.exitCode).toBe(130);
    expect(stopped.stderr).toBe("error: interrupted while reading the accounts' document lists; nothing was uploaded\n");
    expect(batch.mock().deps.store.state.documents.filter((document) => document.account_id === A)).toEqual([]);
  });

  it('accounts import: every row in the results file, those not sent as NOT_SENT; the next run creates them once', async () => {
    const list = Array.from({ length: 4 }, (_, index) => `client.stop${index}@example.com`);
    const csv = join(batch.home(), 'clients.csv');
    writeFileSync(csv, `email,first_name,last_name\n${list.map((email, index) => `${email},New,Client ${index}`).join('\n')}\n`);
    const results = join(batch.home(), 'results.ndjson');
    pressAt = { count: 1, method: 'POST', path: /\/accounts$/ };
    const stopped = await runMain(['accounts', 'import', csv, '--results', results, '--concurrency', '1'], { env: env(), home: batch.home() });
    expect(stopped.exitCode).toBe(130);
    expect(stopped.stderr).toMatch(new RegExp(`^error: interrupted: accounts: 1 created, 0 already there, 0 failed, 0 skipped, 3 not sent in [^\\n]+\\n${HINT}\\n$`));
    expect(ndjson(readFileSync(results, 'utf8')).map((line) => [line.line, line.status, line.error_code])).toEqual([
      [2, 'created', null],
      [3, 'failed', 'NOT_SENT'],
      [4, 'failed', 'NOT_SENT'],
      [5, 'failed', 'NOT_SENT'],
    ]);

    const rest = await runMain(['accounts', 'import', csv, '--results', results], { env: env(), home: batch.home() });
    expect(rest.exitCode).toBe(0);
    const made = batch.mock().deps.store.state.accounts.filter((account) => list.includes(account.email)).map((account) => account.email);
    expect(made.sort()).toEqual([...list].sort());
  });
});
