/**
 * Runs `work` over `items` with at most `concurrency` at a time, in input order of starting.
 * Once `signal` is aborted no further item starts; items already started finish.
 */
export async function runPool<T>(items: readonly T[], concurrency: number, signal: AbortSignal, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (!signal.aborted && next < items.length) {
      const index = next;
      next += 1;
      await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
