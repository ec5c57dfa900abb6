// The data directory of a large partner for bench/mock-scale.bench.js, bundled from src/ by it
// (esbuild): the demo fixture's partners and keys, then `accounts` accounts of partner 1 (Acme),
// each with its primary holder, a login link, one project and `documentsPerAccount` documents, and a
// deliverable for every tenth project. Written by the store's own snapshot writer
// (writeDataDirState), as a mock would have saved it, in seconds rather than a request per record.
// The documents' files are hard links to one file: the directory holds a file per document, as
// uploads leave it, without gigabytes of content.
import { createHash } from 'node:crypto';
import { link, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stateFromFixture } from '../src/mock/fixture';
import { writeDataDirState } from '../src/mock/persistence';
import { DEMO_FIXTURE } from '../src/mock/seed';

const DAY_MS = 86_400_000;
const TYPES = ['tax_return', 'quarterly_estimate', 'bookkeeping'];
const LINKS_AT_ONCE = 256;
// Under ext4's 65,000 links to a file, in whole batches.
const LINKS_PER_FILE = LINKS_AT_ONCE * 234;

export async function generateDataDir(dataDir, { accounts, documentsPerAccount }) {
  const { state, blobs: seededBlobs } = stateFromFixture(DEMO_FIXTURE, new Date());
  const start = Date.parse('2026-01-05T09:00:00.000Z');
  const iso = (ms) => new Date(ms).toISOString();
  const next = state.nextIds;
  const first = { accountId: next.account, projectId: next.project };
  const blobs = [];
  for (let index = 0; index < accounts; index += 1) {
    const created = iso(start + index * 1000);
    const account = { id: next.account++, partner_id: 1, email: `client.${index}@example.com`, first_name: 'Client', last_name: `Number ${index}`, status: 'active', created_at: created };
    state.accounts.push(account);
    const user = { id: next.user++, account_id: account.id, role: 'primary', email: account.email, first_name: account.first_name, last_name: account.last_name, spouse_status: null, created_at: created };
    state.users.push(user);
    state.loginLinks.push({
      id: next.loginLink++,
      token_sha256: createHash('sha256').update(`bench-${index}`).digest('hex'),
      account_id: account.id,
      user_id: user.id,
      purpose: 'initial_access',
      redirect_url: null,
      created_at: created,
      expires_at: iso(start + index * 1000 + 7 * DAY_MS),
      invalidated_at: null,
      used_at: null,
    });
    const project = {
      id: next.project++,
      account_id: account.id,
      type: TYPES[index % TYPES.length],
      tax_year: 2025,
      status: index % 10 === 0 ? 'completed' : 'in_progress',
      progress_percentage: index % 10 === 0 ? 100 : 40,
      created_at: created,
      estimated_completion: null,
      last_updated: created,
    };
    state.projects.push(project);
    let firstDocument;
    for (let number = 0; number < documentsPerAccount; number += 1) {
      const blob = `bench${String(state.documents.length).padStart(27, '0')}`;
      blobs.push(blob);
      const document = {
        id: next.document++,
        account_id: account.id,
        filename: `statement-${number}.pdf`,
        tax_year: 2025,
        description: `Statement ${number}`,
        file_size: 1024,
        file_type: 'application/pdf',
        uploaded_at: iso(start + index * 1000 + number),
        blob,
      };
      state.documents.push(document);
      firstDocument ??= document;
    }
    if (index % 10 === 0 && firstDocument) {
      state.deliverables.push({
        id: next.deliverable++,
        project_id: project.id,
        document_id: firstDocument.id,
        title: `${project.tax_year} return`,
        status: 'completed',
        summary: 'Prepared and reviewed.',
        prepared_date: created,
        view_link_hours: 72,
      });
    }
  }
  const blobDirectory = join(dataDir, 'blobs');
  await mkdir(blobDirectory, { recursive: true, mode: 0o700 });
  for (const seeded of seededBlobs) await writeFile(join(blobDirectory, seeded.blob), seeded.content, { mode: 0o600 });
  // Every generated document's file links to one of a few files of the same 1 KB.
  for (let start = 0; start < blobs.length; start += LINKS_AT_ONCE) {
    const content = join(dataDir, `bench-content-${Math.floor(start / LINKS_PER_FILE)}`);
    if (start % LINKS_PER_FILE === 0) await writeFile(content, Buffer.alloc(1024, 'x'), { mode: 0o600 });
    await Promise.all(blobs.slice(start, start + LINKS_AT_ONCE).map((blob) => link(content, join(blobDirectory, blob))));
  }
  await writeDataDirState(dataDir, state);
  return { ...first, accounts: state.accounts.length, documents: state.documents.length, deliverables: state.deliverables.length };
}
