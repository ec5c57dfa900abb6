import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCUMENTS, DocumentsLedger, readDocumentsLedger } from '../../src/batch/ledgers/documents';
import { defaultPathOf } from '../../src/batch/ledger';

const origin = 'http://127.0.0.1:4010';
const at = new Date('2026-11-25T01:00:00Z');
const meta = { profile: null, at };
const w2 = { origin, account_id: 1001, tax_year: 2025, filename: 'w2.pdf' };

function ledgerPath(): string {
  return defaultPathOf(DOCUMENTS, { XDG_DATA_HOME: mkdtempSync(join(tmpdir(), 'taxprep-documents-')) });
}

describe('documents ledger', () => {
  it('settles only the intent a line names: refusing an older one leaves the newer open; an upload names the intent it settles', async () => {
    const path = ledgerPath();
    const ledger = await DocumentsLedger.open(path);
    const older = await ledger.recordIntent(w2, { sha256: 'A', size: 2, known_ids: [], ...meta });
    const newer = await ledger.recordIntent(w2, { sha256: 'B', size: 3, known_ids: [], ...meta });
    await ledger.recordRefused(older, w2, { code: 'SERVICE_UNAVAILABLE', ...meta });
    expect(ledger.openIntent(w2)?.id).toBe(newer);
    await ledger.recordUploaded(w2, { intent: newer, sha256: 'B', size: 3, document_id: '8107', ...meta });
    expect(ledger.openIntent(w2)).toBeUndefined();
    await ledger.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.at(-1)).toMatchObject({ type: 'uploaded', intent: newer, document_id: '8107' });
    const view = await readDocumentsLedger(path);
    expect(view.openIntent(w2)).toBeUndefined();
    expect(view.uploads().map((entry) => [entry.filename, entry.document_id])).toEqual([['w2.pdf', '8107']]);
  });

  it('knows uploads by content (any name) and by name; an intent stays open until settled', async () => {
    const path = ledgerPath();
    const ledger = await DocumentsLedger.open(path);
    const first = await ledger.recordIntent(w2, { sha256: 'A', size: 2, known_ids: [], ...meta });
    await ledger.recordUploaded(w2, { intent: first, sha256: 'A', size: 2, document_id: '8102', ...meta });
    const refused = await ledger.recordIntent({ ...w2, filename: 'k1.pdf' }, { sha256: 'K', size: 2, known_ids: [], ...meta });
    await ledger.recordRefused(refused, { ...w2, filename: 'k1.pdf' }, { code: 'PAYLOAD_TOO_LARGE', ...meta });
    await ledger.recordIntent(w2, { sha256: 'B', size: 3, known_ids: ['8102'], ...meta });
    await ledger.close();

    const view = await readDocumentsLedger(path);
    expect(view.uploadedContent({ origin, account_id: 1001, tax_year: 2025 }, 'A')?.document_id).toBe('8102');
    expect(view.uploadedContent({ origin, account_id: 1001, tax_year: 2024 }, 'A')).toBeUndefined();
    expect(view.uploadedContent({ origin: 'https://other.example', account_id: 1001, tax_year: 2025 }, 'A')).toBeUndefined();
    expect(view.uploadedUnder(w2)).toMatchObject({ sha256: 'A', document_id: '8102' });
    expect(view.openIntent(w2)).toMatchObject({ sha256: 'B', known_ids: ['8102'] });
    expect(view.openIntent({ ...w2, filename: 'k1.pdf' })).toBeUndefined();
  });

  it('an upload found in the list settles the open intent of its name; compaction keeps what is still needed', async () => {
    const path = ledgerPath();
    const ledger = await DocumentsLedger.open(path);
    for (let index = 0; index < 120; index += 1) {
      const intent = await ledger.recordIntent(w2, { sha256: `S${index}`, size: 1, known_ids: [], ...meta });
      await ledger.recordRefused(intent, w2, { code: 'VALIDATION_ERROR', ...meta });
    }
    await ledger.recordIntent(w2, { sha256: 'C', size: 1, known_ids: [], ...meta });
    await ledger.recordUploaded(w2, { sha256: 'C', size: 1, document_id: '8200', ...meta });
    await ledger.close();

    const reopened = await DocumentsLedger.open(path);
    await reopened.close();
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(1);
    const view = await readDocumentsLedger(path);
    expect(view.openIntent(w2)).toBeUndefined();
    expect(view.uploadedUnder(w2)?.document_id).toBe('8200');
  });
});
