import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli';
import type { Dispatch } from '../../src/commands/types';
import { UsageError } from '../../src/errors';

/** Parses argv with the real command tree and returns what the command's `parseOptions` made of it. */
async function optionsOf(argv: string[]): Promise<unknown> {
  let parsed: unknown;
  const dispatch: Dispatch = async (load, raw) => {
    parsed = (await load()).parseOptions(raw);
  };
  const program = buildProgram(dispatch, { writeOut: () => undefined, writeErr: () => undefined });
  await program.parseAsync(argv, { from: 'user' });
  return parsed;
}

async function usageErrorOf(argv: string[]): Promise<UsageError> {
  const error = await optionsOf(argv).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(UsageError);
  return error as UsageError;
}

describe('argv -> options', () => {
  it.each<[string, string[], unknown]>([
    ['health', ['health'], {}],
    ['accounts get', ['accounts', 'get', '1001'], { accountId: 1001 }],
    [
      'accounts create',
      ['accounts', 'create', '--email', 'jane@example.com', '--first-name', 'Jane', '--last-name', 'Doe'],
      { body: { email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe' }, yes: false },
    ],
    [
      'accounts create --yes',
      ['accounts', 'create', '--email', 'jane@example.com', '--first-name', 'Jane', '--last-name', 'Doe', '-y'],
      { body: { email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe' }, yes: true },
    ],
    [
      'accounts create with a spouse',
      ['accounts', 'create', '--email', 'jane@example.com', '--first-name', 'Jane', '--last-name', 'Doe',
        '--spouse-email', 'john@example.com', '--spouse-first-name', 'John', '--spouse-last-name', 'Doe'],
      {
        body: {
          email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe',
          spouse: { email: 'john@example.com', first_name: 'John', last_name: 'Doe' },
        },
        yes: false,
      },
    ],
    [
      'accounts create with a spouse and no invitation',
      ['accounts', 'create', '--email', 'jane@example.com', '--first-name', 'Jane', '--last-name', 'Doe',
        '--spouse-email', 'john@example.com', '--spouse-first-name', 'John', '--spouse-last-name', 'Doe', '--no-spouse-invitation'],
      {
        body: {
          email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe',
          spouse: { email: 'john@example.com', first_name: 'John', last_name: 'Doe', send_invitation: false },
        },
        yes: false,
      },
    ],
    [
      'docs upload of several files',
      ['docs', 'upload', '1001', 'a.pdf', 'b.png', '--tax-year', '2024', '--description', 'From the bank'],
      { accountId: 1001, paths: ['a.pdf', 'b.png'], fields: { tax_year: 2024, description: 'From the bank' }, allowDuplicate: false },
    ],
    [
      'docs upload --allow-duplicate',
      ['docs', 'upload', '1001', 'a.pdf', '--tax-year', '2024', '--allow-duplicate'],
      { accountId: 1001, paths: ['a.pdf'], fields: { tax_year: 2024 }, allowDuplicate: true },
    ],
    [
      'docs sync with its defaults',
      ['docs', 'sync', 'shared'],
      { dir: 'shared', excludes: [], uploadChanged: false, skipInvalid: false, dryRun: false, offline: false, concurrency: 4, ledgerPath: undefined, lockWaitMs: 5000 },
    ],
    [
      'docs sync with every flag',
      ['docs', 'sync', 'shared', '--manifest', 'm.csv', '--exclude', 'drafts', '--exclude', '*.tmp', '--description', 'From the portal', '--upload-changed', '--skip-invalid', '--dry-run', '--offline', '--concurrency', '8', '--ledger', 'l.ndjson', '--lock-wait', '0'],
      { dir: 'shared', manifest: 'm.csv', excludes: ['drafts', '*.tmp'], description: 'From the portal', uploadChanged: true, skipInvalid: true, dryRun: true, offline: true, concurrency: 8, ledgerPath: 'l.ndjson', lockWaitMs: 0 },
    ],
    ['docs list', ['docs', 'list', '1001'], { accountId: 1001, query: {}, all: false, ndjson: false }],
    [
      'docs list with every flag',
      ['docs', 'list', '1001', '--tax-year', '2024', '--limit', '20', '--offset', '40', '--all', '--ndjson'],
      { accountId: 1001, query: { tax_year: 2024, limit: 20, offset: 40 }, all: true, ndjson: true },
    ],
    ['docs get', ['docs', 'get', '5001'], { documentId: 5001 }],
    ['projects list', ['projects', 'list', '1001'], { accountId: 1001, query: {} }],
    // The contract says only "a year": a year the mock would refuse (1900-2100 is its choice) is sent.
    ['projects list --tax-year 1850', ['projects', 'list', '1001', '--tax-year', '1850'], { accountId: 1001, query: { tax_year: 1850 } }],
    [
      'projects list with filters',
      ['projects', 'list', '1001', '--tax-year', '2024', '--type', 'tax_return', '--status', 'in_review'],
      { accountId: 1001, query: { tax_year: 2024, type: 'tax_return', status: 'in_review' } },
    ],
    ['projects status', ['projects', 'status', '2001'], { projectId: 2001 }],
    ['deliverables list', ['deliverables', 'list'], { query: {}, all: false, ndjson: false }],
    [
      'deliverables list with every flag',
      ['deliverables', 'list', '--status', 'delivered', '--account', '1001', '--type', 'tax_planning', '--limit', '100', '--offset', '0', '--all'],
      { query: { status: 'delivered', account_id: 1001, project_type: 'tax_planning', limit: 100, offset: 0 }, all: true, ndjson: false },
    ],
    ['deliverables get', ['deliverables', 'get', '2001'], { projectId: 2001, open: false }],
    ['deliverables get --open', ['deliverables', 'get', '2001', '--open'], { projectId: 2001, open: true }],
  ])('%s', async (_name, argv, expected) => {
    expect(await optionsOf(argv)).toEqual(expected);
  });
});

describe('bad flags and arguments are refused before any request, naming the flag and the rule', () => {
  it.each<[string, string[], string, string]>([
    ['an id that is not a number', ['accounts', 'get', 'abc'], '<account-id>', 'must be a positive integer (got "abc")'],
    ['a zero id', ['docs', 'get', '0'], '<document-id>', 'must be a positive integer (got "0")'],
    ['a negative id', ['projects', 'status', '-5'], '<project-id>', 'must be a positive integer (got "-5")'],
    ['a fractional id', ['deliverables', 'get', '1.5'], '<project-id>', 'must be a positive integer (got "1.5")'],
    ['a missing email', ['accounts', 'create', '--first-name', 'Jane', '--last-name', 'Doe'], '--email', 'is required'],
    ['a bad email', ['accounts', 'create', '--email', 'jane@', '--first-name', 'Jane', '--last-name', 'Doe'], '--email', 'must be a valid email address'],
    ['a long first name', ['accounts', 'create', '--email', 'j@example.com', '--first-name', 'x'.repeat(51), '--last-name', 'Doe'], '--first-name', 'must be at most 50 characters'],
    [
      'a bad spouse email',
      ['accounts', 'create', '--email', 'j@example.com', '--first-name', 'J', '--last-name', 'D', '--spouse-email', 'nope', '--spouse-first-name', 'K', '--spouse-last-name', 'D'],
      '--spouse-email',
      'must be a valid email address',
    ],
    ['a missing tax year', ['docs', 'upload', '1001', 'a.pdf'], '--tax-year', 'is required'],
    ['a tax year that is not a year', ['docs', 'upload', '1001', 'a.pdf', '--tax-year', '24x'], '--tax-year', 'must be a year of four digits'],
    ['a tax year of five digits', ['docs', 'upload', '1001', 'a.pdf', '--tax-year', '20250'], '--tax-year', 'must be a year of four digits'],
    ['a page size over 100', ['docs', 'list', '1001', '--limit', '101'], '--limit', 'must be an integer from 1 to 100'],
    ['a page size of 0', ['deliverables', 'list', '--limit', '0'], '--limit', 'must be an integer from 1 to 100'],
    ['a negative offset', ['docs', 'list', '1001', '--offset', '-1'], '--offset', 'must be an integer from 0 to 1000000000'],
    ['an account filter that is not an id', ['deliverables', 'list', '--account', 'acme'], '--account', 'must be a positive integer'],
    ['a sync concurrency over 16', ['docs', 'sync', 'shared', '--concurrency', '17'], '--concurrency', 'must be an integer from 1 to 16'],
  ])('%s', async (_name, argv, flag, rule) => {
    const error = await usageErrorOf(argv);
    expect(error.details?.[flag]).toEqual([rule]);
    expect(error.message).toContain(`${flag} ${rule}`);
  });

  it.each<[string, string[], string]>([
    ['project type', ['projects', 'list', '1001', '--type', 'taxes'], '--type'],
    ['project status', ['projects', 'list', '1001', '--status', 'done'], '--status'],
    ['deliverable status', ['deliverables', 'list', '--status', 'sent'], '--status'],
    ['deliverable project type', ['deliverables', 'list', '--type', 'tax_plan'], '--type'],
  ])('an unknown %s lists the allowed values', async (_name, argv, flag) => {
    const error = await usageErrorOf(argv);
    expect(error.message).toMatch(new RegExp(`^${flag} must be one of: [a-z_]+(, [a-z_]+)+$`));
  });

  it('refuses docs sync --offline without --dry-run', async () => {
    const error = await usageErrorOf(['docs', 'sync', 'shared', '--offline']);
    expect(error.message).toBe('--offline plans from the ledger alone and sends nothing, so it goes with --dry-run');
  });

  it('names the missing spouse flags when only some are given', async () => {
    const error = await usageErrorOf(['accounts', 'create', '--email', 'j@example.com', '--first-name', 'J', '--last-name', 'D', '--spouse-email', 'k@example.com']);
    expect(error.message).toContain('missing --spouse-first-name and --spouse-last-name');
  });

  it('refuses --no-spouse-invitation without a spouse', async () => {
    const error = await usageErrorOf(['accounts', 'create', '--email', 'j@example.com', '--first-name', 'J', '--last-name', 'D', '--no-spouse-invitation']);
    expect(error.message).toContain('--no-spouse-invitation applies to a spouse');
  });

  it('does not repeat an API key pasted where an id belongs', async () => {
    const key = `tpk_${'a1'.repeat(12)}`;
    const error = await usageErrorOf(['accounts', 'get', key]);
    expect(error.message).not.toContain(key);
    expect(error.message).toContain('tpk_…a1a1');
  });
});
