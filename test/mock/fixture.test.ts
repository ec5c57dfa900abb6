import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixtureError, loadFixtureFile, parseFixture, resolveTimestamp, stateFromFixture, type FixtureInput } from '../../src/mock/fixture';

/** A small valid fixture; each case below breaks one thing in a copy of it. */
function validFixture(): FixtureInput {
  return {
    partners: [
      { id: 1, name: 'Acme', permitted_redirect_domains: ['acme.example'], api_keys: [{ key: 'tpk_testKeyAcme00000000000001', label: 'main' }] },
      { id: 2, name: 'Beacon', api_keys: [{ key: 'tpk_testKeyBeacon000000000002', label: 'main' }] },
    ],
    accounts: [
      { id: 10, partner_id: 1, email: 'ana@example.com', first_name: 'Ana', last_name: 'Lima' },
      { id: 11, partner_id: 1, email: 'bo@example.com', first_name: 'Bo', last_name: 'Berg', spouse: { email: 'cy@example.com', first_name: 'Cy', last_name: 'Berg' } },
      { id: 20, partner_id: 2, email: 'dee@example.com', first_name: 'Dee', last_name: 'Ng' },
    ],
    documents: [
      { id: 100, account_id: 10, filename: 'w2.txt', tax_year: 2025, content: 'W-2' },
      { id: 200, account_id: 20, filename: 'other.txt', tax_year: 2025 },
    ],
    projects: [
      {
        id: 50,
        account_id: 10,
        type: 'tax_return',
        tax_year: 2025,
        status: 'in_progress',
        progress_percentage: 40,
        outstanding_items: [{ type: 'client_request', description: 'Confirm address', priority: 'low' }],
        deliverable: { id: 90, document_id: 100, title: 'Return', status: 'draft' },
      },
    ],
  };
}

function problemsOf(change: (fixture: any) => void): string[] {
  const fixture = validFixture();
  change(fixture);
  try {
    parseFixture(fixture);
  } catch (error) {
    expect(error).toBeInstanceOf(FixtureError);
    return (error as FixtureError).problems;
  }
  throw new Error('the fixture was accepted');
}

describe('parseFixture', () => {
  it('accepts a valid fixture and fills in the defaults', () => {
    const fixture = parseFixture(validFixture());
    expect(fixture.accounts[0]!.status).toBe('active');
    expect(fixture.partners[1]!.permitted_redirect_domains).toEqual([]);
    expect(fixture.partners[0]!.api_keys[0]!.permissions).toContain('accounts:write');
    expect(fixture.partners[0]!.api_keys[0]!.expires_at).toBeNull();
    expect(fixture.accounts[1]!.spouse!.status).toBe('invited');
    expect(fixture.projects[0]!.deliverable!.view_link_hours).toBe(72);
  });

  it.each<[string, (fixture: any) => void, string]>([
    ['an invalid email', (f) => (f.accounts[2].email = 'dee@'), 'accounts[2].email: must be a valid email address'],
    ['a missing name', (f) => delete f.accounts[0].first_name, 'accounts[0].first_name: is required'],
    ['keys that are not a list', (f) => (f.partners[0].api_keys = 'tpk_testKeyAcme00000000000001'), 'partners[0].api_keys: must be an array'],
    ['an id that is a string', (f) => (f.accounts[0].id = '10'), 'accounts[0].id: must be a positive integer'],
    ['a name of 51 characters', (f) => (f.accounts[0].last_name = 'é'.repeat(51)), 'accounts[0].last_name: must be at most 50 characters'],
    ['an unknown account', (f) => (f.projects[0].account_id = 99), 'projects[0].account_id: no account with id 99'],
    ['an unknown partner', (f) => (f.accounts[1].partner_id = 7), 'accounts[1].partner_id: no partner with id 7'],
    ['a document of an unknown account', (f) => (f.documents[1].account_id = 12), 'documents[1].account_id: no account with id 12'],
    ['a duplicate account id', (f) => (f.accounts[2].id = 10), 'accounts[2].id: duplicate id 10 (also accounts[0])'],
    ['a duplicate partner id', (f) => (f.partners[1].id = 1), 'partners[1].id: duplicate id 1 (also partners[0])'],
    [
      'a primary email used by a spouse, in another case',
      (f) => (f.accounts[2].email = 'CY@example.com'),
      'accounts[2].email: duplicate email CY@example.com (already used by accounts[1].spouse.email; emails are unique across the service, ignoring case)',
    ],
    [
      'a malformed key',
      (f) => (f.partners[0].api_keys[0].key = 'sk_live_1234'),
      'partners[0].api_keys[0].key: must be a well-formed API key: "tpk_" followed by 20 to 128 letters and digits',
    ],
    [
      'the same key twice',
      (f) => (f.partners[1].api_keys[0].key = f.partners[0].api_keys[0].key),
      'partners[1].api_keys[0].key: duplicate key (the same as partners[0].api_keys[0].key)',
    ],
    ['an unknown permission', (f) => (f.partners[0].api_keys[0].permissions = ['accounts:delete']), 'partners[0].api_keys[0].permissions[0]: must be one of: accounts:read'],
    [
      "a deliverable whose document is another account's",
      (f) => (f.projects[0].deliverable.document_id = 200),
      "projects[0].deliverable.document_id: document 200 belongs to account 20, not to the project's account 10",
    ],
    ['a deliverable with an unknown document', (f) => (f.projects[0].deliverable.document_id = 300), 'projects[0].deliverable.document_id: no document with id 300'],
    [
      'two spouses',
      (f) => (f.accounts[1].spouse = [f.accounts[1].spouse, { email: 'dy@example.com', first_name: 'Dy', last_name: 'Berg' }]),
      'accounts[1].spouse: must be one object: an account has at most one spouse',
    ],
    ['an unknown field', (f) => (f.accounts[0].nickname = 'A'), 'accounts[0].nickname: is not a field of the fixture format'],
    ['an unknown top-level field', (f) => (f.users = []), 'users: is not a field of the fixture format'],
    ['a bad status', (f) => (f.projects[0].status = 'done'), 'projects[0].status: must be one of: waiting_on_client, in_progress, in_review, completed'],
    ['a progress over 100', (f) => (f.projects[0].progress_percentage = 101), 'projects[0].progress_percentage: must be an integer from 0 to 100'],
    ['an unknown priority', (f) => (f.projects[0].outstanding_items[0].priority = 'urgent'), 'projects[0].outstanding_items[0].priority: must be one of: high, medium, low'],
    ['a bad timestamp', (f) => (f.accounts[0].created_at = 'last week'), 'accounts[0].created_at: must be an ISO 8601 timestamp'],
    ['a bare date', (f) => (f.accounts[0].created_at = '2025-01-01'), 'accounts[0].created_at: must be an ISO 8601 timestamp'],
    ['both content forms', (f) => (f.documents[0].content_base64 = 'AA=='), 'documents[0].content_base64: give either content or content_base64, not both'],
    ['no partners', (f) => (f.partners = []), 'partners: must list at least one partner'],
    ['a path in a filename', (f) => (f.documents[0].filename = '../etc/passwd'), 'documents[0].filename: must be a file name without / or \\'],
    ['a redirect domain with a scheme', (f) => (f.partners[0].permitted_redirect_domains = ['https://acme.example']), 'partners[0].permitted_redirect_domains[0]: must be a lower-case domain name'],
  ])('refuses %s, naming the path and the rule', (_, change, expected) => {
    expect(problemsOf(change).join('\n')).toContain(expected);
  });

  it('reports every problem, one per line', () => {
    const problems = problemsOf((f) => {
      f.accounts[0].email = 'nope';
      f.accounts[1].partner_id = 3;
      f.projects[0].tax_year = 1899;
    });
    expect(problems).toEqual([
      'accounts[0].email: must be a valid email address',
      'projects[0].tax_year: must be a year from 1900 to 2100',
      'accounts[1].partner_id: no partner with id 3',
    ]);
  });

  it('refuses something that is not an object', () => {
    expect(() => parseFixture([])).toThrow('(top level): must be a JSON object with partners, accounts, documents and projects');
  });
});

describe('loadFixtureFile', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'taxprep-fixture-test-'));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  async function fileWith(name: string, text: string): Promise<string> {
    const path = join(directory, name);
    await writeFile(path, text);
    return path;
  }

  it('loads a valid file, with or without a byte-order mark', async () => {
    const path = await fileWith('bom.json', `\uFEFF${JSON.stringify(validFixture())}`);
    expect((await loadFixtureFile(path)).accounts).toHaveLength(3);
  });

  it('prefixes each problem with the file', async () => {
    const fixture = validFixture() as any;
    fixture.accounts[2].email = 'not-an-email';
    const path = await fileWith('seed.json', JSON.stringify(fixture));
    await expect(loadFixtureFile(path)).rejects.toThrow(`${path}: accounts[2].email: must be a valid email address`);
  });

  it.each([
    ['a missing colon', '{\n  "partners": [],\n  "accounts" []\n}', "line 3, column 14: expected ':' after the property name, found \"[\""],
    ['a trailing comma', '{\n  "partners": [1,]\n}', 'line 2, column 18: expected a value, found "]"'],
    ['a cut-off file', '{"partners": [', 'line 1, column 15: the file ends too early'],
    ['single quotes', "{'partners': []}", 'line 1, column 2: unexpected text: strings and property names take double quotes, and the literals are true, false and null, found "\'"'],
    ['text after the value', '{}\n{}', 'line 2, column 1: unexpected text after the end of the JSON value, found "{"'],
    ['a comment', '{"partners": []} // demo', 'line 1, column 18: comments are not allowed in JSON, found "/"'],
    ['a line break in a string', '{"partners": [],\n "accounts": ["a\nb"]}', 'line 2, column 15: a string is not closed on its line, found "\\""'],
  ])('gives the line and column of invalid JSON: %s', async (_, text, expected) => {
    const path = await fileWith('broken.json', text);
    await expect(loadFixtureFile(path)).rejects.toThrow(`${path}: invalid JSON at ${expected}`);
  });

  it('says when the file cannot be read', async () => {
    const path = join(directory, 'missing.json');
    await expect(loadFixtureFile(path)).rejects.toThrow(`${path}: cannot read the file (no such file)`);
    await expect(loadFixtureFile(directory)).rejects.toThrow(`${directory}: cannot read the file (it is a directory)`);
  });
});

describe('stateFromFixture', () => {
  const now = new Date('2026-03-01T12:00:00.000Z');

  it('resolves relative timestamps against the load time and keeps ISO ones', () => {
    const fixture = validFixture() as any;
    fixture.accounts[0].created_at = '-30d';
    fixture.accounts[1].created_at = '2025-06-01T09:30:00+02:00';
    fixture.projects[0].estimated_completion = '+14d';
    fixture.projects[0].last_updated = '-1h30m';
    fixture.projects[0].outstanding_items[0].requested_at = 'now';
    const { state } = stateFromFixture(parseFixture(fixture), now);
    expect(state.accounts[0]!.created_at).toBe('2026-01-30T12:00:00.000Z');
    expect(state.accounts[1]!.created_at).toBe('2025-06-01T07:30:00.000Z');
    expect(state.accounts[2]!.created_at).toBe(now.toISOString());
    expect(state.projects[0]).toMatchObject({ estimated_completion: '2026-03-15T12:00:00.000Z', last_updated: '2026-03-01T10:30:00.000Z', created_at: now.toISOString() });
    expect(state.outstandingItems[0]!.requested_at).toBe(now.toISOString());
  });

  it('reads relative times in the one duration grammar, and refuses ones beyond ten years or without a unit', () => {
    for (const value of ['-30', '+11y', '-3700d', '+', 'yesterday']) expect(resolveTimestamp(value, now)).toBeUndefined();
    expect(resolveTimestamp('+90m', now)).toBe('2026-03-01T13:30:00.000Z');
  });

  it('numbers users and items, and hands out ids after the largest of each kind', () => {
    const { state } = stateFromFixture(parseFixture(validFixture()), now);
    expect(state.users.map(({ id, account_id, role, spouse_status }) => ({ id, account_id, role, spouse_status }))).toEqual([
      { id: 1, account_id: 10, role: 'primary', spouse_status: null },
      { id: 2, account_id: 11, role: 'primary', spouse_status: null },
      { id: 3, account_id: 11, role: 'spouse', spouse_status: 'invited' },
      { id: 4, account_id: 20, role: 'primary', spouse_status: null },
    ]);
    expect(state.nextIds).toEqual({ partner: 3, account: 21, user: 5, loginLink: 1, document: 201, project: 51, outstandingItem: 2, deliverable: 91, email: 1 });
  });

  it('stores keys hashed and redacted, never in full', () => {
    const fixture = parseFixture(validFixture());
    const { state } = stateFromFixture(fixture, now);
    expect(state.apiKeys[0]).toMatchObject({ redacted: 'tpk_…0001', partner_id: 1, label: 'main' });
    expect(state.apiKeys[0]!.key_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(state)).not.toContain('tpk_testKeyAcme');
  });

  it('gives documents their content and size, and a fresh secret every time', () => {
    const fixture = validFixture() as any;
    fixture.documents[1].content_base64 = Buffer.from([0, 1, 2, 255]).toString('base64');
    const first = stateFromFixture(parseFixture(fixture), now);
    const second = stateFromFixture(parseFixture(fixture), now);
    expect(first.blobs.map((blob) => [blob.documentId, blob.content])).toEqual([
      [100, Buffer.from('W-2')],
      [200, Buffer.from([0, 1, 2, 255])],
    ]);
    expect(first.state.documents.map((document) => document.file_size)).toEqual([3, 4]);
    expect(first.state.documents[0]!.file_type).toBe('text/plain');
    expect(first.state.signingSecret).not.toBe(second.state.signingSecret);
    expect(first.state.documents[0]!.blob).not.toBe(second.state.documents[0]!.blob);
  });
});
