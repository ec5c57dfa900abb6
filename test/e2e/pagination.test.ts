import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSecret, runCli, withoutColor } from '../helpers/cli';
import { startServeMock, type ServedMock } from '../helpers/serveMock';

/** `--all` over more items than the largest page (100), from a seed with 250 documents and 120 deliverables. */

const KEY = 'tpk_e2ePaginationKey0000000000001';
const DOCUMENTS = 250;
const PROJECTS = 120;

function fixture() {
  return {
    partners: [{ id: 1, name: 'Paging Partner', api_keys: [{ key: KEY, label: 'paging' }] }],
    accounts: [{ id: 1, partner_id: 1, email: 'paging@example.com', first_name: 'Page', last_name: 'Many', status: 'active' }],
    documents: Array.from({ length: DOCUMENTS + PROJECTS }, (_, index) => ({
      id: index + 1,
      account_id: 1,
      filename: `doc-${index + 1}.txt`,
      // The first document, alone in its year, has a line break in its description.
      tax_year: index === 0 ? 2023 : 2024,
      description: index === 0 ? 'line one\nline two' : `document ${index + 1}`,
    })),
    projects: Array.from({ length: PROJECTS }, (_, index) => ({
      id: index + 1,
      account_id: 1,
      type: 'tax_return',
      tax_year: 2024,
      status: 'completed',
      progress_percentage: 100,
      deliverable: { id: index + 1, document_id: DOCUMENTS + index + 1, title: `Return ${index + 1}`, status: 'delivered' },
    })),
  };
}

let mock: ServedMock;
const env = () => ({ TAXPREP_BASE_URL: mock.baseUrl, TAXPREP_API_KEY: KEY });

beforeAll(async () => {
  const seed = join(mkdtempSync(join(tmpdir(), 'taxprep-e2e-seed-')), 'seed.json');
  writeFileSync(seed, JSON.stringify(fixture()));
  registerSecret(KEY);
  mock = await startServeMock(['--seed', seed, '--rate-limit', 'off']);
});
afterAll(async () => {
  await mock?.stop();
});

describe('--all', () => {
  it('docs list --all --json prints ONE document with every item of every page', async () => {
    const result = await runCli(['docs', 'list', '1', '--all', '--json'], { env: env() });
    expect(result.exitCode).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(Object.keys(document)).toEqual(['documents', 'total_count', 'has_more']);
    expect(document.total_count).toBe(DOCUMENTS + PROJECTS);
    expect(document.has_more).toBe(false);
    expect(document.documents.map((item: { id: number }) => item.id).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: DOCUMENTS + PROJECTS }, (_, index) => index + 1),
    );
    expect(result.stdout.split('\n')).toHaveLength(2);
  });

  it('docs list --all --ndjson prints one line per item, from --offset on', async () => {
    const result = await runCli(['docs', 'list', '1', '--all', '--ndjson', '--offset', '10'], { env: env() });
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(DOCUMENTS + PROJECTS - 10);
    expect(lines.every((line) => typeof JSON.parse(line).id === 'number')).toBe(true);
  });

  it('docs list without --all prints one page and says how to get the rest', async () => {
    const result = await runCli(['docs', 'list', '1'], { env: env() });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(50);
    expect(result.stderr).toBe(`Showing 50 of ${DOCUMENTS + PROJECTS} documents; next page: --offset 50, or --all for every one.\n`);
  });

  it('a description with a line break stays on its row off a terminal', async () => {
    const result = await runCli(['docs', 'list', '1', '--tax-year', '2023'], { env: env() });
    expect(result.stdout).toMatch(/^1\tdoc-1\.txt\t2023\tline one line two\t[^\t\n]+\n$/);
  });

  it('deliverables list --all --json gathers every page', async () => {
    const result = await runCli(['deliverables', 'list', '--all', '--json'], { env: env() });
    expect(result.exitCode).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.deliverables).toHaveLength(PROJECTS);
    expect(document.total_count).toBe(PROJECTS);
  });

  it('deliverables list --all on a terminal prints one table', async () => {
    const result = await runCli(['deliverables', 'list', '--all', '--limit', '50'], { env: env(), tty: true });
    expect(result.exitCode).toBe(0);
    const lines = withoutColor(result.stdout).trimEnd().split('\n');
    expect(lines.filter((line) => line.startsWith('ID'))).toHaveLength(1);
    expect(lines).toHaveLength(PROJECTS + 1);
  });
});
