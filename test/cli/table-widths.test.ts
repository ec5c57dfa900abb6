import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as listDeliverables from '../../src/commands/deliverables/list';
import * as listDocuments from '../../src/commands/docs/list';
import * as uploadDocuments from '../../src/commands/docs/upload';
import * as ledgerCommand from '../../src/commands/login-link/ledger';
import * as listProfiles from '../../src/commands/profiles/list';
import * as listProjects from '../../src/commands/projects/list';
import * as projectStatus from '../../src/commands/projects/status';
import { Ledger } from '../../src/batch/ledgers/loginLinks';
import { renderTable, truncateMiddle } from '../../src/output/table';
import { palette } from '../../src/output/colors';
import { CONFIGURABLE_QUERY_PARAMETERS, DEFAULT_MAX_RESPONSE_BYTES } from '../../src/config/settings';
import type { Clock } from '../../src/types';
import { createTestContext } from '../helpers/context';
import { stubApi, type Stubs } from '../helpers/stubApi';

/**
 * Every table taxprep prints, at 60, 80 and 120 columns on a terminal: no line is wider than the
 * terminal, and ids, statuses, numbers and percentages appear whole. Data as the mock's demo has it.
 */
const NOW = new Date('2026-11-25T00:11:00Z');
const clock: Clock = { now: () => NOW, sleep: async () => undefined };
const WIDTHS = [60, 80, 120];
const directory = mkdtempSync(join(tmpdir(), 'taxprep-table-widths-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function terminal(columns: number, stubs: Stubs = {}, env: Record<string, string> = {}) {
  const test = createTestContext({ clock, tty: true, columns, env: { XDG_CONFIG_HOME: join(directory, 'config'), XDG_DATA_HOME: join(directory, 'data'), NO_COLOR: '1', ...env } });
  const api = stubApi(stubs);
  test.ctx.api = async () => api;
  test.ctx.settings = async () => ({
    profileName: null,
    baseUrl: 'http://127.0.0.1:4010/v1beta',
    baseUrlSource: 'flag',
    apiKey: undefined,
    apiKeySource: undefined,
    maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
    queryParameters: { ...CONFIGURABLE_QUERY_PARAMETERS },
  });
  return test;
}

/** Nothing cut, and each text there in full once the lines of the table are read as one text. */
function expectWhole(text: string, texts: string[]) {
  expect(text).not.toContain('…');
  const words = text.split(/\s+/).join(' ');
  for (const whole of texts) {
    // A wrapped cell continues on the next lines of its row, below itself: its words keep their order there.
    const pattern = whole.split(' ').map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('(?: \\S+)*? ');
    expect(words, whole).toMatch(new RegExp(pattern));
  }
}

/** Each line fits, and each value a person reads appears whole, as a word of its own. */
function expectFitted(text: string, columns: number, whole: Array<string | number>) {
  const lines = text.trimEnd().split('\n');
  for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(columns);
  for (const value of whole) expect(text, `${value} at ${columns} columns`).toMatch(new RegExp(`(^|\\s)${String(value).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\s|$)`, 'm'));
}

const documents = [
  { id: 7004, filename: '1099-int-2025.pdf', tax_year: 2025, description: '1099-INT 2025 from First Community Bank', uploaded_at: '2026-11-22T00:11:00Z' },
  { id: 7002, filename: '1099-int-2024.pdf', tax_year: 2024, description: '1099-INT 2024 from First Community Bank', uploaded_at: '2026-08-07T00:11:00Z' },
  { id: 7101, filename: 'quarterly-estimate-q3-2025-worksheet.pdf', tax_year: 2025, description: 'Deliverable: Q3 2025 estimated tax payment', uploaded_at: '2026-11-22T00:11:00Z' },
];
const projects = [
  { id: 5001, type: 'tax_return', tax_year: 2025, status: 'waiting_on_client', progress_percentage: 20, created_at: '2026-01-10T09:00:00Z', estimated_completion: '2026-12-09T00:11:00Z' },
  { id: 5002, type: 'quarterly_estimate', tax_year: 2025, status: 'in_progress', progress_percentage: 60, created_at: '2026-01-10T09:00:00Z', estimated_completion: '2026-12-02T00:11:00Z' },
  { id: 5003, type: 'tax_return', tax_year: 2024, status: 'completed', progress_percentage: 100, created_at: '2026-01-10T09:00:00Z', estimated_completion: '2026-08-22T00:11:00Z' },
];
const deliverables = [9001, 9002, 9003].map((id, index) => ({
  id,
  project_id: 5002 + index,
  account_id: 1001 + index,
  document_id: 7101 + index,
  title: index === 0 ? 'Q3 2025 estimated tax payment' : '2024 federal and state tax return',
  project_type: index === 0 ? 'quarterly_estimate' : 'tax_return',
  status: index === 0 ? 'in_review' : 'delivered',
  view_link: `https://app.example/view/${id}`,
  summary: 'Refund expected',
  prepared_date: '2026-11-22T00:11:00Z',
  expires_at: '2026-11-28T00:11:00Z',
}));

describe.each(WIDTHS)('every table at %i columns', (columns) => {
  it('docs list keeps ids, tax years and both ends of file names', async () => {
    const t = terminal(columns, { call: { listDocuments: { documents, total_count: 3, has_more: false } } });
    await listDocuments.run(t.ctx, { accountId: 1001, query: {}, all: false, ndjson: false });
    expectFitted(t.stdout(), columns, [7004, 7002, 7101, 2025, 2024, '2026-11-22', 'ID', 'UPLOADED']);
    // The two 1099-INT files stay apart: their years and extensions are kept.
    expect(t.stdout()).toMatch(/2025\.pdf/);
    expect(t.stdout()).toMatch(/2024\.pdf/);
  });

  it('projects list keeps ids, statuses and percentages', async () => {
    const t = terminal(columns, { call: { listProjects: { projects, total_count: 3, has_more: false } } });
    await listProjects.run(t.ctx, { accountId: 1001, query: {} });
    expectFitted(t.stdout(), columns, [5001, 5002, 5003, 'waiting_on_client', 'in_progress', 'completed', '20%', '60%', '100%', 2024, 2025]);
  });

  it('projects status keeps priorities in its outstanding items', async () => {
    const t = terminal(columns, {
      call: { getProjectStatus: {
          ...projects[0],
          account_id: 1001,
          outstanding_items: [
            { type: 'missing_document', priority: 'high', description: 'Form 1098 mortgage interest statement for 2025', requested_at: '2026-11-18T00:11:00Z' },
            { type: 'client_request', priority: 'medium', description: 'Confirm the dependents claimed this year', requested_at: '2026-11-20T00:11:00Z' },
            { type: 'missing_document', priority: 'high', description: 'Brokerage 1099-B consolidated statement for every account', requested_at: '2026-11-21T00:11:00Z' },
          ],
          last_updated: '2026-11-23T00:11:00Z',
        },
      },
    });
    await projectStatus.run(t.ctx, { projectId: 5001 });
    expectFitted(t.stdout(), columns, ['high', 'medium', '20%', 5001]);
    // Issue 21, case 5: the description a person must act on wraps, whole, instead of being cut.
    expectWhole(t.stdout(), ['Form 1098 mortgage interest statement for 2025', 'Brokerage 1099-B consolidated statement for every account']);
  });

  it('deliverables list keeps ids and statuses', async () => {
    const t = terminal(columns, { call: { listDeliverables: { deliverables, total_count: 3, has_more: false } } });
    await listDeliverables.run(t.ctx, { query: {}, all: false, ndjson: false });
    expectFitted(t.stdout(), columns, [9001, 9002, 9003, 'in_review', 'delivered']);
  });

  it('docs upload keeps ids, tax years and sizes', async () => {
    const file = join(directory, '1099-int-2025-first-community-bank.pdf');
    writeFileSync(file, 'x'.repeat(2048));
    const uploaded = { id: 8102, account_id: 1001, filename: '1099-int-2025-first-community-bank.pdf', tax_year: 2025, description: 'Form 1099-INT', file_size: 2048, file_type: 'application/pdf', uploaded_at: '2026-11-25T00:11:00Z' };
    const t = terminal(columns, { uploads: [uploaded] });
    await uploadDocuments.run(t.ctx, { accountId: 1001, paths: [file], fields: { tax_year: 2025 }, allowDuplicate: true });
    expectFitted(t.stdout(), columns, [8102, 2025, '2.0 KB']);
  });

  it('login-link ledger keeps accounts, states and whole e-mail addresses at 80 columns and more', async () => {
    const path = join(directory, `ledger-${columns}.ndjson`);
    const ledger = await Ledger.open(path);
    const origin = 'https://partner-api.example-tax-service.com';
    for (const [account, email] of [[1001, 'maria.gonzalez@example.com'], [1002, 'robert.chen-whitfield@example.com']] as const) {
      const target = { origin, account_id: account, user_email: null };
      const meta = { profile: 'acme', at: new Date('2026-11-23T10:00:00Z') };
      const intent = await ledger.recordIntent(target, meta);
      await ledger.recordIssued(intent, target, { user_email: email, purpose: 'support_request', expires_at: '2026-11-30T10:00:00Z', created_at: '2026-11-23T10:00:00Z' }, meta);
    }
    await ledger.close();
    const t = terminal(columns, {}, { TAXPREP_NOW: NOW.toISOString() });
    await ledgerCommand.run(t.ctx, { ledgerPath: path });
    expectFitted(t.stdout(), columns, [1001, 1002, 'valid', '2026-11-30']);
    if (columns >= 80) expectFitted(t.stdout(), columns, ['support_request', 'maria.gonzalez@example.com', 'robert.chen-whitfield@example.com']);
    else expect(t.stdout()).toMatch(/not shown at 60 columns;\s+--json\s+has every field/);
  });

  it('profiles list keeps names and redacted keys', async () => {
    const config = join(directory, `profiles-${columns}`);
    mkdirSync(join(config, 'taxprep'), { recursive: true });
    const stored = {
      default_profile: 'acme',
      profiles: {
        acme: { base_url: 'https://partner-api.example-tax-service.com/v1beta', api_key: 'tpk_live_aaaaaaaaaaaaaaaaaaaaaaaa0042' },
        staging: { base_url: 'http://127.0.0.1:4010/v1beta', api_key: 'tpk_test_bbbbbbbbbbbbbbbbbbbbbbbb0001' },
      },
    };
    writeFileSync(join(config, 'taxprep', 'profiles.json'), JSON.stringify(stored));
    const t = terminal(columns, {}, { XDG_CONFIG_HOME: config });
    await listProfiles.run(t.ctx);
    expectFitted(t.stdout(), columns, ['acme', 'staging', 'tpk_…0042', 'tpk_…0001']);
  });
});

describe('fitting by meaning', () => {
  const layout = (columns: number) => ({ tty: true, colors: palette(false), columns });

  it('shortens dates first: date and relative time, then the date alone; free text after', async () => {
    const head = ['ID', { title: 'Note', cut: 'text' as const }, { title: 'When', shorter: () => ['a date', 'd'] }];
    const rows = [['1', 'a longer note', 'a long date']];
    expect((await renderTable(head, rows, layout(30))).split('\n')[1]).toBe('1   a longer note  a long date');
    expect((await renderTable(head, rows, layout(25))).split('\n')[1]).toBe('1   a longer note  a date');
    expect((await renderTable(head, rows, layout(21))).split('\n')[1]).toBe('1   a longer no…  d');
  });

  it('cuts a file name in its middle, keeping the year and extension', () => {
    const width = (text: string) => [...text].length;
    expect(truncateMiddle('1099-int-2024.pdf', 12, width)).toBe('109…2024.pdf');
    expect(truncateMiddle('w2.pdf', 12, width)).toBe('w2.pdf');
  });
});
