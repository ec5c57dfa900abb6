import { describe, expect, it } from 'vitest';
import { decide, describeDecision, groupsToList, plan, type LedgerKnowledge, type Listing, type SyncFile } from '../../src/commands/docs/lib/syncPlan';

const file = (filename: string, sha256: string, extra: Partial<SyncFile> = {}): SyncFile => ({
  relative: `1001/2025/${filename}`,
  path: `/d/1001/2025/${filename}`,
  account_id: 1001,
  tax_year: 2025,
  filename,
  sha256,
  size: 10,
  ...extra,
});

/** A ledger that knows uploads as (name, sha, document id), and open intents as (name, sha, ids known then). */
function ledger(uploads: Array<[string, string, string]> = [], intents: Array<[string, string, string[]]> = []): LedgerKnowledge {
  return {
    uploadedContent: (_account, _year, sha256) => {
      const found = uploads.find(([, sha]) => sha === sha256);
      return found && { filename: found[0], document_id: found[2] };
    },
    uploadedUnder: (slot) => {
      const found = uploads.filter(([name]) => name === slot.filename).at(-1);
      return found && { sha256: found[1], document_id: found[2] };
    },
    openIntent: (slot) => {
      const found = intents.find(([name]) => name === slot.filename);
      return found && { sha256: found[1], known_ids: found[2] };
    },
  };
}

const listing = (names: Record<string, string[]>): Listing => new Map(Object.entries(names).map(([name, ids]) => [name, ids.map((id) => ({ id }))]));
const options = { uploadChanged: false };

describe('docs sync: deciding a file', () => {
  it('content the ledger recorded for the account and year is skipped, whatever the name', () => {
    expect(decide(file('renamed.pdf', 'A'), ledger([['w2.pdf', 'A', '7001']]), undefined, options)).toEqual({ action: 'skip', reason: 'uploaded_before', document_id: '7001' });
  });

  it('a name the account has, content unknown to the ledger: skipped', () => {
    expect(decide(file('w2.pdf', 'A'), ledger(), listing({ 'w2.pdf': ['7001'] }), options)).toEqual({ action: 'skip', reason: 'name_on_service', document_id: '7001' });
  });

  it('a name the account has, content the ledger knows to differ: a conflict, uploaded only with --upload-changed', () => {
    const known = ledger([['w2.pdf', 'A', '7001']]);
    const onService = listing({ 'w2.pdf': ['7001'] });
    const conflict = decide(file('w2.pdf', 'B'), known, onService, options);
    expect(conflict).toEqual({ action: 'conflict', reason: 'content_changed', document_id: '7001' });
    expect(describeDecision(conflict)).toBe('content differs from what was uploaded under this name (document 7001); pass --upload-changed to upload it');
    expect(decide(file('w2.pdf', 'B'), known, onService, { uploadChanged: true })).toEqual({ action: 'upload', reason: 'changed', document_id: '7001', known_ids: ['7001'] });
  });

  it('a new name is uploaded, remembering the documents of that name it saw', () => {
    expect(decide(file('w2.pdf', 'A'), ledger(), listing({}), options)).toEqual({ action: 'upload', reason: 'new', known_ids: [] });
  });

  it('an interrupted upload that reached the service is skipped and recorded; one that did not is sent again', () => {
    const interrupted = ledger([], [['w2.pdf', 'A', []]]);
    expect(decide(file('w2.pdf', 'A'), interrupted, listing({ 'w2.pdf': ['7005'] }), options)).toEqual({
      action: 'skip',
      reason: 'interrupted_upload_stored',
      document_id: '7005',
      landed: { document_id: '7005', sha256: 'A' },
    });
    expect(decide(file('w2.pdf', 'A'), interrupted, listing({}), options)).toEqual({ action: 'upload', reason: 'interrupted_upload_missing', known_ids: [] });
  });

  it('an interrupted --upload-changed: a document the intent did not know means it landed', () => {
    const interrupted = ledger([['w2.pdf', 'A', '7001']], [['w2.pdf', 'B', ['7001']]]);
    expect(decide(file('w2.pdf', 'B'), interrupted, listing({ 'w2.pdf': ['7009', '7001'] }), { uploadChanged: true })).toMatchObject({ action: 'skip', reason: 'interrupted_upload_stored', document_id: '7009' });
    expect(decide(file('w2.pdf', 'B'), interrupted, listing({ 'w2.pdf': ['7001'] }), { uploadChanged: true })).toEqual({ action: 'upload', reason: 'changed', document_id: '7001', known_ids: ['7001'] });
    // The file changed again after the kill: what landed is recorded, and the new content conflicts with it.
    expect(decide(file('w2.pdf', 'C'), interrupted, listing({ 'w2.pdf': ['7009', '7001'] }), { uploadChanged: false })).toEqual({
      action: 'conflict',
      reason: 'content_changed',
      document_id: '7009',
      landed: { document_id: '7009', sha256: 'B' },
    });
  });

  it('offline (no listing): the ledger alone decides', () => {
    expect(decide(file('w2.pdf', 'A'), ledger(), undefined, options)).toEqual({ action: 'upload', reason: 'not_in_ledger', known_ids: [] });
    expect(decide(file('w2.pdf', 'B'), ledger([['w2.pdf', 'A', '7001']]), undefined, options)).toMatchObject({ action: 'conflict', reason: 'content_changed' });
  });
});

describe('docs sync: planning a run', () => {
  it('lists only the account and year groups the ledger does not settle', () => {
    const files = [file('a.pdf', 'A'), file('b.pdf', 'B', { tax_year: 2024 }), file('c.pdf', 'C', { account_id: 1002 })];
    expect(groupsToList(files, ledger([['a.pdf', 'A', '1'], ['c.pdf', 'C', '3']]))).toEqual([{ account_id: 1001, tax_year: 2024 }]);
    expect(groupsToList(files, ledger([['a.pdf', 'A', '1'], ['b.pdf', 'B', '2'], ['c.pdf', 'C', '3']]))).toEqual([]);
  });

  it('two files under one name in one run: the same content is skipped, other content is a conflict', () => {
    const files = [file('w2.pdf', 'A', { relative: 'x/w2.pdf' }), file('w2.pdf', 'A', { relative: 'y/w2.pdf' }), file('w2.pdf', 'B', { relative: 'z/w2.pdf' })];
    const planned = plan(files, ledger(), new Map([['1001|2025', listing({})]]), options);
    expect(planned.map((entry) => entry.decision)).toEqual([
      { action: 'upload', reason: 'new', known_ids: [] },
      { action: 'skip', reason: 'same_file_in_run' },
      { action: 'conflict', reason: 'same_name_in_run', other: 'x/w2.pdf' },
    ]);
  });
});
