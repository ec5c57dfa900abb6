import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors';

// Each ledger kind's own description (its name in messages, the line types it accepts, what
// moving a damaged file aside costs), read as a user meets it. The kinds' modules are imported
// inside the tests, not above: a module's top-level values are then made while a test runs,
// which is what lets the mutation run (test/mutation) try each of them against these tests.

function ledgerFile(lines: readonly object[], tail = ''): string {
  const path = join(mkdtempSync(join(tmpdir(), 'taxprep-kinds-')), 'ledger.ndjson');
  writeFileSync(path, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n${tail}`);
  return path;
}

async function damage(read: (path: string) => Promise<unknown>, lines: readonly object[]): Promise<{ path: string; error: UsageError }> {
  const path = ledgerFile(lines, '{"type":"unknown"}\n');
  const error = await read(path).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(UsageError);
  return { path, error: error as UsageError };
}

describe('ledger kinds', () => {
  it('the login-link ledger reads each of its line types, and names itself and the cost of a new ledger when damaged', async () => {
    const { readLedger } = await import('../../src/batch/ledgers/loginLinks');
    const at = '2026-11-23T10:00:00Z';
    const target = { origin: 'http://127.0.0.1:4010', account_id: 1, user_email: null, profile: 'acme' };
    const lines = [
      { type: 'run', run: 'r1', digest: 'd', items: 2, at },
      { type: 'intent', id: 'i1', ...target, run: 'r1', at },
      { type: 'issued', intent: 'i1', ...target, run: 'r1', at, link: { user_email: 'a@example.com', purpose: 'expired_link', expires_at: '2026-12-01T00:00:00Z', created_at: at } },
      { type: 'intent', id: 'i2', ...target, account_id: 2, run: 'r1', at },
      { type: 'refused', intent: 'i2', ...target, account_id: 2, run: 'r1', code: 'ACCOUNT_SUSPENDED', at },
      { type: 'intent', id: 'i3', ...target, account_id: 3, at },
      { type: 'run_end', run: 'r1', at },
    ];
    const view = await readLedger(ledgerFile(lines));
    expect(view.links().map((entry) => entry.account_id)).toEqual([1]);
    expect(view.uncertainIntents().map((entry) => entry.account_id)).toEqual([3]);
    expect(view.unfinishedRun('d')).toBeUndefined();

    const { path, error } = await damage(readLedger, lines);
    expect(error.message).toBe(`the login-link ledger ${path} is damaged at line 8`);
    expect(error.hint).toBe('Move the file aside to start a new ledger (the next renewal then regenerates every link it does not know).');
  });

  it('the webhook outbox reads each of its line types, and names itself and the cost of a new outbox when damaged', async () => {
    const { readOutbox } = await import('../../src/batch/ledgers/outbox');
    const at = '2026-11-23T10:00:00Z';
    const event = { type: 'event', event: 'project.progress', hooks: ['hk_1'], body: '{"n":1}', seen_at: at, at };
    const lines = [
      { ...event, id: 'msg_a' },
      { ...event, id: 'msg_b' },
      { ...event, id: 'msg_c', pass: 'p1' },
      { type: 'pass', pass: 'p1', result: 'committed', at },
      { type: 'attempt', id: 'msg_a', hook: 'hk_1', attempt: 1, result: 'delivered', detail: 'HTTP 204', at },
      { type: 'attempt', id: 'msg_b', hook: 'hk_1', attempt: 1, result: 'failed', detail: 'HTTP 410', at },
      { type: 'redeliver', id: 'msg_b', hook: 'hk_1', at },
    ];
    const view = await readOutbox(ledgerFile(lines));
    expect([...view.all()].map((delivery) => `${delivery.key} ${delivery.status} ${delivery.last.type}`)).toEqual(['msg_a:hk_1 delivered attempt', 'msg_b:hk_1 pending redeliver', 'msg_c:hk_1 pending event']);
    // The fold keeps no body (it stays in the file) and one array for hooks that repeat.
    const events = [...view.all()].map((delivery) => delivery.event);
    expect(events[0]).not.toHaveProperty('body');
    expect(events[0]!.hooks).toBe(events[2]!.hooks);

    const { path, error } = await damage(readOutbox, lines);
    expect(error.message).toBe(`the webhook outbox ledger ${path} is damaged at line 8`);
    expect(error.hint).toBe('Move the file aside to start a new ledger (deliveries it held that were not sent are lost; `taxprep hooks recover` can send again what watch saw since a time).');
  });

  it('the accounts ledger reads each of its line types, keys accounts by email, and names itself and the cost of a new ledger when damaged', async () => {
    const { readAccountsLedger } = await import('../../src/batch/ledgers/accounts');
    const at = '2026-11-23T10:00:00Z';
    const who = { origin: 'http://127.0.0.1:4010', profile: 'acme', at };
    const lines = [
      { type: 'intent', id: 'i1', ...who, email: 'Jane@Example.com' },
      { type: 'created', intent: 'i1', ...who, email: 'jane@example.com', account_id: 1001, source: 'import' },
      { type: 'intent', id: 'i2', ...who, email: 'john@example.com' },
      { type: 'refused', intent: 'i2', ...who, email: 'john@example.com', code: 'SERVICE_UNAVAILABLE' },
      // Two emails that only upper-casing would make one: an open intent for the one, an account for the other.
      { type: 'intent', id: 'i3', ...who, email: 'straße@example.com' },
      { type: 'exists', ...who, email: 'strasse@example.com', account_id: 1002, source: 'import' },
      // An intent line without an id (not one this tool writes): a line naming no intent settles none.
      { type: 'intent', ...who, email: 'pat@example.com' },
      { type: 'created', ...who, email: 'pat@example.com', account_id: 1003, source: 'create' },
    ];
    const view = await readAccountsLedger(ledgerFile(lines));
    expect(view.accounts().map((entry) => entry.account_id)).toEqual([1001, 1002, 1003]);
    expect(view.findAccount(who.origin, 'JANE@example.com')?.account_id).toBe(1001);
    expect(view.findAccount(who.origin, 'straße@example.com')).toBeUndefined();
    expect(view.uncertainIntent(who.origin, 'strasse@example.com')).toBeUndefined();
    expect(view.uncertainIntents().map((entry) => entry.email)).toEqual(['straße@example.com', 'pat@example.com']);

    const { path, error } = await damage(readAccountsLedger, lines);
    expect(error.message).toBe(`the accounts ledger ${path} is damaged at line 9`);
    expect(error.hint).toBe('Move the file aside to start a new ledger (the next import then asks the service about every row again, and its 409s name the accounts already there).');
  });

  it('the documents ledger reads each of its line types, keys uploads by name, and names itself and the cost of a new ledger when damaged', async () => {
    const { readDocumentsLedger } = await import('../../src/batch/ledgers/documents');
    const at = '2026-11-23T10:00:00Z';
    const account = { origin: 'http://127.0.0.1:4010', account_id: 1, tax_year: 2025, profile: 'acme', at };
    const file = { sha256: 'a'.repeat(64), size: 3 };
    const lines = [
      // Left by a compaction: the upload names an intent whose line is gone.
      { type: 'uploaded', intent: 'i0', ...account, filename: 'w2.pdf', ...file, document_id: 'doc_1' },
      { type: 'intent', id: 'i1', ...account, filename: '1099.pdf', sha256: 'b'.repeat(64), size: 4, known_ids: [] },
      { type: 'refused', intent: 'i1', ...account, filename: '1099.pdf', code: 'FILE_TOO_LARGE' },
      { type: 'intent', id: 'i2', ...account, filename: 'id.png', sha256: 'c'.repeat(64), size: 5, known_ids: [] },
    ];
    const view = await readDocumentsLedger(ledgerFile(lines));
    expect(view.uploads().map((entry) => entry.document_id)).toEqual(['doc_1']);
    expect(view.uploadedUnder({ ...account, filename: 'w2.pdf' })?.document_id).toBe('doc_1');
    expect(view.uploadedUnder({ ...account, filename: 'id.png' })).toBeUndefined();
    expect(view.openIntent({ ...account, filename: '1099.pdf' })).toBeUndefined();
    expect(view.openIntent({ ...account, filename: 'id.png' })?.id).toBe('i2');

    const { path, error } = await damage(readDocumentsLedger, lines);
    expect(error.message).toBe(`the documents ledger ${path} is damaged at line 5`);
    expect(error.hint).toBe('Move the file aside to start a new ledger (the next sync then asks the service which names each account has, and skips those).');
  });
});
