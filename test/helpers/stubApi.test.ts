import { describe, expect, it } from 'vitest';
import { stubApi } from './stubApi';

const HEALTH = { status: 'ok', timestamp: '2026-11-17T10:15:00Z' };

describe('the stub API fails a test on stubs it never used, as gh does', () => {
  it.fails('a stubbed call never made fails the test', () => {
    stubApi({ call: { health: HEALTH } });
  });

  it.fails('a stubbed upload never sent fails the test', () => {
    stubApi({ uploads: [new Error('never reached')] });
  });

  it('names what was left unused, and is satisfied once it is used', async () => {
    const api = stubApi({ call: { health: HEALTH }, pages: { listDocuments: [] }, uploads: [new Error('refused')] });
    expect(api.unused()).toEqual(['call:health', 'pages:listDocuments', 'upload #1']);
    await api.call('health', {});
    for await (const _page of api.pages('listDocuments', {})) expect.unreachable();
    await expect(api.upload(1001, { filename: 'w2.pdf' } as never, {} as never)).rejects.toThrow('refused');
    expect(api.unused()).toEqual([]);
  });

  it('an unexpected call throws', async () => {
    await expect(stubApi({}).call('health', {})).rejects.toThrow('unexpected call of health');
  });
});
