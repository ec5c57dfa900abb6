import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { misfit, tolerantReader } from '../../src/api/tolerant';
import { CliError, EXIT } from '../../src/errors';
import { createTestContext } from '../helpers/context';

const KEY = 'acme_0123456789abcdefghij';

describe('tolerant forms of the contract schemas', () => {
  it('a read requires an id and nothing else; nulls and unknown fields pass, unknown fields are kept', () => {
    const { answer } = tolerantReader('getDocument');
    expect(misfit(answer, { id: '7' })).toEqual({ data: { id: '7' } });
    expect(misfit(answer, { id: 7, tax_year: null, file_size: null, extra: { a: 1 } })).toEqual({ data: { id: 7, tax_year: null, file_size: null, extra: { a: 1 } } });
    expect(misfit(answer, { filename: 'w2.pdf' })).toEqual({ problems: expect.stringMatching(/^id /) });
    expect(misfit(answer, { id: 7, tax_year: 'twenty' })).toEqual({ problems: expect.stringMatching(/^tax_year /) });
  });

  it('a write requires nothing: the service acknowledged it', () => {
    expect(tolerantReader('uploadDocument').write).toBe(true);
    expect(misfit(tolerantReader('createAccount').answer, { spouse: null })).toEqual({ data: { spouse: null } });
    expect(misfit(tolerantReader('createAccount').answer, { id: 1, spouse: { email: 'b@example.com' } })).toMatchObject({ data: { spouse: { email: 'b@example.com' } } });
  });

  it('a list requires its array; its items are read one by one, each requiring an id', () => {
    const { answer, list } = tolerantReader('listDocuments');
    expect(list?.key).toBe('documents');
    expect(misfit(answer, { documents: [{ anything: 1 }] })).toEqual({ data: { documents: [{ anything: 1 }] } });
    expect(misfit(answer, { total_count: 1 })).toEqual({ problems: expect.stringMatching(/^documents /) });
    expect(misfit(list!.item, { id: 1, tax_year: null })).toEqual({ data: { id: 1, tax_year: null } });
    expect(misfit(list!.item, { tax_year: 2024 })).toEqual({ problems: expect.stringMatching(/^id /) });
  });

  it('a key named like a prototype member stays data', () => {
    const parsed = misfit(tolerantReader('getAccount').answer, JSON.parse('{"id":1,"constructor":{"x":1},"__proto__":{"polluted":1}}'));
    expect(parsed).toMatchObject({ data: { id: 1, constructor: { x: 1 } } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('against a scripted server', () => {
  let pages: Array<Record<string, unknown> | string> = [];
  let seen: string[] = [];
  let baseUrl = '';
  const server = createServer((request, response) => {
    seen.push(request.url ?? '');
    const offset = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('offset'));
    response.writeHead(200, { 'content-type': 'application/json' });
    const page = pages[seen.length - 1] ?? { deliverables: [], offset };
    response.end(typeof page === 'string' ? page : JSON.stringify(page));
  });
  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1beta`;
  });
  afterAll(() => server.close());

  async function collect(query: Record<string, unknown> = {}, maxPages?: number, env: Record<string, string> = {}) {
    seen = [];
    const t = createTestContext({ env: { TAXPREP_BASE_URL: baseUrl, TAXPREP_API_KEY: KEY, ...env } });
    const ids: unknown[] = [];
    try {
      for await (const page of (await t.ctx.api()).pages('listDeliverables', { query }, { maxPages })) ids.push(...page.data.deliverables.map((item) => item.id));
      return { ids, stderr: t.stderr(), error: undefined };
    } catch (error) {
      return { ids, stderr: t.stderr(), error: error as CliError };
    } finally {
      await t.ctx.close();
    }
  }

  async function createAccount() {
    seen = [];
    const t = createTestContext({ env: { TAXPREP_BASE_URL: baseUrl, TAXPREP_API_KEY: KEY } });
    try {
      const response = await (await t.ctx.api()).call('createAccount', { body: { email: 'a@example.com', first_name: 'A', last_name: 'B' } });
      return { data: response.data, stderr: t.stderr() };
    } finally {
      await t.ctx.close();
    }
  }

  it('a write acknowledged with an empty body, or without an id, succeeds with a warning', async () => {
    pages = [''];
    expect(await createAccount()).toEqual({ data: {}, stderr: 'warning: the service accepted the request (HTTP 200) but its answer carries no id\n' });
    pages = [{ id: '5', first_name: 7 }];
    const misfit = await createAccount();
    expect(misfit.data).toEqual({ id: '5', first_name: 7 });
    expect(misfit.stderr).toMatch(/^warning: the service accepted the request \(HTTP 200\) but its answer does not fit the contract \(first_name .*\); it is shown as sent\n$/);
  });

  it('at an empty page, though has_more says more follow', async () => {
    pages = [{ deliverables: [{ id: 1 }], has_more: true }, { deliverables: [], has_more: true }];
    expect(await collect({ limit: 1 })).toMatchObject({ ids: [1], error: undefined });
    expect(seen).toHaveLength(2);
  });

  it('when the offset reaches total_count, without has_more', async () => {
    pages = [{ deliverables: [{ id: 1 }, { id: 2 }], total_count: 3 }, { deliverables: [{ id: 3 }], total_count: 3 }];
    expect(await collect({ limit: 2 })).toMatchObject({ ids: [1, 2, 3], error: undefined });
    expect(seen).toHaveLength(2);
  });

  it('when a page repeats the previous one and no other offset name can be found: INVALID_RESPONSE (exit 8) after the pages read', async () => {
    pages = [{ deliverables: [{ id: 1 }], has_more: true }, { deliverables: [{ id: 1 }], has_more: true }];
    const result = await collect({ limit: 1 });
    expect(result.ids).toEqual([1]);
    expect(result.stderr).toBe('');
    expect(result.error?.code).toBe('INVALID_RESPONSE');
    expect(result.error?.exitCode).toBe(EXIT.SERVER);
    expect(result.error?.message).toBe(
      'the service sent the same deliverables again at offset 1, as if it ignored the query parameter "offset"; no other name was found: ' +
        'too little data: 0 items, and an offset shows only with two (1 request spent looking); the deliverables read are shown, but the list is incomplete: ' +
        'run `taxprep doctor` to see which names the service honours',
    );
    expect(result.error?.hint).toBe('If you know the service\'s name for the offset, set "deliverables.offset" in TAXPREP_QUERY_PARAMETERS or the profile\'s query_parameters.');
    // The two pages, then one wider read of the list's start to tell the names apart.
    expect(seen).toEqual(['/v1beta/deliverables?limit=1&offset=0', '/v1beta/deliverables?limit=1&offset=1', '/v1beta/deliverables?limit=100']);
  });

  it('the offset goes under the configured name (deliverables.offset)', async () => {
    pages = [{ deliverables: [{ id: 1 }], has_more: true }, { deliverables: [{ id: 2 }], has_more: false }];
    const result = await collect({ limit: 1 }, undefined, { TAXPREP_QUERY_PARAMETERS: 'deliverables.offset=skip' });
    expect(result.ids).toEqual([1, 2]);
    expect(seen).toEqual(['/v1beta/deliverables?limit=1&skip=0', '/v1beta/deliverables?limit=1&skip=1']);
  });

  it('pages of items without ids are compared whole: different ones are not a repeat', async () => {
    pages = [{ deliverables: [{ title: 'a' }], has_more: true }, { deliverables: [{ title: 'b' }], has_more: false }];
    const result = await collect({ limit: 1 });
    expect(result.ids).toEqual([undefined, undefined]);
    expect(seen).toHaveLength(2);
    expect(result.stderr).not.toContain('same deliverables again');
  });

  it('beyond --max-pages: LIMIT, exit 12', async () => {
    pages = [1, 2, 3].map((id) => ({ deliverables: [{ id }], has_more: true }));
    const result = await collect({ limit: 1 }, 2);
    expect(result.ids).toEqual([1, 2]);
    expect(result.error?.code).toBe('TOO_MANY_PAGES');
    expect(result.error?.exitCode).toBe(EXIT.LIMIT);
  });

  it('rows that do not match a filter are dropped after paging counted them (the offset follows what was sent)', async () => {
    pages = [
      { deliverables: [{ id: 1, status: 'draft' }, { id: 2, status: 'delivered' }], has_more: true },
      { deliverables: [{ id: 3, status: 'draft' }], has_more: false },
    ];
    const result = await collect({ limit: 2, status: 'draft' });
    expect(result.ids).toEqual([1, 3]);
    expect(seen[1]).toContain('offset=2');
    expect(result.stderr.match(/^warning: /gm)).toHaveLength(1);
    expect(result.stderr).toContain('whose status is not draft, as if it ignored the query parameter "status"');
  });
});

