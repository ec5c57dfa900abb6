import { describe, expect, it } from 'vitest';
import { pacedPages, type RateLimitPacer } from '../../src/batch/pacer';

/** A pacer that records what it was told, in order. */
function recordingPacer() {
  const calls: string[] = [];
  let next = 0;
  const pacer = {
    acquire: async () => {
      next += 1;
      calls.push(`acquire ${next}`);
      return next;
    },
    record: (sequence: number, headers: Record<string, string>) => calls.push(`record ${sequence} ${headers['x-ratelimit-remaining']}`),
    release: (sequence: number) => calls.push(`release ${sequence}`),
    fail: (sequence: number) => calls.push(`fail ${sequence}`),
  };
  return { pacer: pacer as unknown as RateLimitPacer, calls };
}

describe('list pages read through the pacer', () => {
  it('takes a slot before each page request, learns from each answer, and gives back the slot the end did not use', async () => {
    const { pacer, calls } = recordingPacer();
    async function* pages() {
      yield { headers: { 'x-ratelimit-remaining': '9' }, page: 1 };
      yield { headers: { 'x-ratelimit-remaining': '8' }, page: 2 };
    }
    const read: number[] = [];
    for await (const page of pacedPages(pacer, pages())) read.push(page.page);
    expect(read).toEqual([1, 2]);
    expect(calls).toEqual(['acquire 1', 'record 1 9', 'acquire 2', 'record 2 8', 'acquire 3', 'release 3']);
  });

  it('a failed page request fails the read, its slot spent (the service may have counted it)', async () => {
    const { pacer, calls } = recordingPacer();
    async function* pages(): AsyncGenerator<{ headers: Record<string, string> }> {
      yield* [];
      throw new Error('refused');
    }
    await expect(async () => {
      for await (const _ of pacedPages(pacer, pages())) void _;
    }).rejects.toThrow('refused');
    expect(calls).toEqual(['acquire 1', 'fail 1']);
  });
});
