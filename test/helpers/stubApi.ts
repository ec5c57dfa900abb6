import { onTestFinished } from 'vitest';
import type { ApiClient, ApiResponse, UploadFile } from '../../src/api/types';
import { endpoints, type EndpointName } from '../../src/contract/endpoints';

/** The JSON documents a stubbed service answers with, parsed as the real client parses them. */
export interface Stubs {
  call?: Partial<Record<EndpointName, unknown>>;
  /** One document per page, in order. */
  pages?: Partial<Record<'listDocuments' | 'listDeliverables', unknown[]>>;
  /** One outcome per uploaded file, in order: a document, or an error to throw. */
  uploads?: Array<unknown | Error>;
}

export interface StubApi extends ApiClient {
  calls: Array<{ name: string; input: unknown }>;
  uploaded: UploadFile[];
  /** What was stubbed and never asked for: `call:getAccount`, `pages:listDocuments`, `upload #2`. */
  unused(): string[];
}

function answer(name: EndpointName, json: unknown): ApiResponse<any> {
  return { status: endpoints[name].successStatus, data: endpoints[name].response.parse(json), json, headers: {} };
}

/**
 * An API client that answers from `stubs` and records what it was asked. As in gh's HTTP stub
 * registry, both directions fail the test: an unexpected call throws, and a stub that was never
 * used fails the test when it ends (it means the test no longer checks what it says it does).
 */
export function stubApi(stubs: Stubs): StubApi {
  const calls: StubApi['calls'] = [];
  const uploaded: UploadFile[] = [];
  const uploads = [...(stubs.uploads ?? [])];
  const unusedStubs = new Set([
    ...Object.keys(stubs.call ?? {}).map((name) => `call:${name}`),
    ...Object.keys(stubs.pages ?? {}).map((name) => `pages:${name}`),
  ]);
  const api: StubApi = {
    calls,
    uploaded,
    unused: () => [...unusedStubs, ...uploads.map((_, index) => `upload #${uploaded.length + index + 1}`)],
    async call(name, input) {
      calls.push({ name, input });
      if (!stubs.call || !(name in stubs.call)) throw new Error(`unexpected call of ${name}`);
      unusedStubs.delete(`call:${name}`);
      return answer(name, stubs.call[name]);
    },
    async upload(accountId, file, fields, options) {
      calls.push({ name: 'uploadDocument', input: { accountId, fields } });
      const outcome = uploads.shift();
      if (outcome === undefined) throw new Error(`unexpected upload of ${file.filename}`);
      options?.onProgress?.(Math.floor(file.size / 2));
      if (outcome instanceof Error) throw outcome;
      options?.onProgress?.(file.size);
      uploaded.push(file);
      return answer('uploadDocument', outcome);
    },
    async *pages(name, input) {
      calls.push({ name: `pages:${name}`, input });
      const pages = stubs.pages?.[name as keyof NonNullable<Stubs['pages']>];
      if (!pages) throw new Error(`unexpected pages of ${name}`);
      unusedStubs.delete(`pages:${name}`);
      for (const page of pages) yield answer(name, page);
    },
    async raw() {
      throw new Error('unexpected raw request');
    },
  };
  onTestFinished(({ task }) => {
    // A test that failed already has its reason; an unused stub would only bury it.
    if (task.result?.state === 'fail') return;
    const unused = api.unused();
    if (unused.length > 0) throw new Error(`stubs registered but never used: ${unused.join(', ')}`);
  });
  return api;
}
