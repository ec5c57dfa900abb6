import { describe, expect, it } from 'vitest';
import { runBatch, type BatchJob, type FailedOutcome } from '../../src/batch/run';
import { ApiError, InterruptedError } from '../../src/errors';
import { createTestContext } from '../helpers/context';

/**
 * The engine (src/batch/run.ts) in process with a job of its own: what it throws and prints when
 * a job fails in ways the commands' tests cannot arrange at will (a bug, a failure answered after
 * the run was stopped, Ctrl-C together with a refused key).
 */

type Outcome = { kind: 'done'; item: number } | FailedOutcome<number>;
const apiError = (status: number, code: string) => new ApiError(status, { error: { code, message: `${code} answered ${status}` } });

function jobOf(send: (item: number) => Promise<Outcome>): BatchJob<number, Outcome> & { sent: number[] } {
  const sent: number[] = [];
  return {
    sent,
    noun: 'items',
    tally: [
      ['done', 'done'],
      ['failed', 'failed'],
    ],
    send: (item) => (sent.push(item), send(item)),
    failed: (item, error) => ({ kind: 'failed', item, error }),
    json: (outcome) => ({ item: outcome.item, kind: outcome.kind }),
    line: (outcome) => `${outcome.kind} ${outcome.item}\n`,
    label: (item) => String(item),
  };
}

/** A context whose Ctrl-C is `interrupt.abort()`. */
function contextWithInterrupt() {
  const t = createTestContext();
  const interrupt = new AbortController();
  t.ctx.interrupted = () => interrupt.signal;
  return { t, interrupt };
}

describe('the batch engine', () => {
  it('throws an error that is not a CLI error (a bug), instead of printing it as a failed item', async () => {
    const { t } = contextWithInterrupt();
    const bug = new TypeError('a bug in the job');
    const job = jobOf(async (item) => {
      if (item === 1) throw bug;
      return { kind: 'done', item };
    });
    await expect(runBatch(t.ctx, job, { send: [0, 1, 2], settled: [] }, { concurrency: 1 })).rejects.toBe(bug);
    expect(t.stdout()).toBe('done 0\n');
  });

  it('sends nothing when Ctrl-C came before the first item, and ends interrupted (exit 130)', async () => {
    const { t, interrupt } = contextWithInterrupt();
    interrupt.abort(new Error('interrupted'));
    const job = jobOf(async (item) => ({ kind: 'done', item }));
    const error = await runBatch(t.ctx, job, { send: [0, 1], settled: [] }, { concurrency: 2 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InterruptedError);
    expect((error as InterruptedError).exitCode).toBe(130);
    expect(job.sent).toEqual([]);
  });

  it('prints as failed an item in flight that fails after a refused key stopped the run: it was sent, not "not sent"', async () => {
    const { t } = contextWithInterrupt();
    const refused = apiError(401, 'INVALID_API_KEY');
    const job = jobOf(async (item) => {
      if (item === 0) throw refused;
      await new Promise((resolve) => setTimeout(resolve, 20));
      throw apiError(404, 'ACCOUNT_NOT_FOUND');
    });
    await expect(runBatch(t.ctx, job, { send: [0, 1, 2], settled: [] }, { concurrency: 2 })).rejects.toBe(refused);
    expect(t.stdout()).toBe('failed 0\nfailed 1\n');
    expect(t.stderr()).toMatch(/^items: 0 done, 2 failed, 1 not sent in \S+\nfailed: 0 INVALID_API_KEY, 1 ACCOUNT_NOT_FOUND\n/);
  });

  it('ends with the refused key, not as interrupted, when Ctrl-C and a global failure come in the same run', async () => {
    const { t, interrupt } = contextWithInterrupt();
    const refused = apiError(401, 'INVALID_API_KEY');
    const job = jobOf(async () => {
      interrupt.abort(new Error('interrupted'));
      throw refused;
    });
    await expect(runBatch(t.ctx, job, { send: [0, 1], settled: [] }, { concurrency: 1 })).rejects.toBe(refused);
    expect(t.stderr()).toMatch(/^items: 0 done, 1 failed, 1 not sent in /);
  });

  it('lists exactly 20 failures in the summary without "and 0 more"', async () => {
    const { t } = contextWithInterrupt();
    const job = jobOf(async () => {
      throw apiError(404, 'ACCOUNT_NOT_FOUND');
    });
    const items = Array.from({ length: 20 }, (_, index) => index);
    const result = await runBatch(t.ctx, job, { send: items, settled: [] }, { concurrency: 4 });
    expect(result.exitCode).toBe(9);
    const listed = items.map((item) => `${item} ACCOUNT_NOT_FOUND`).join(', ');
    expect(t.stderr()).toMatch(new RegExp(`^items: 0 done, 20 failed in \\S+\\nfailed: ${listed}\\n$`));
  });
});
