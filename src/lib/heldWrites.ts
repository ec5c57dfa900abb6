import { HOLD_WRITES_VARIABLE } from './crashPoints';

/**
 * A test-only switch: TAXPREP_TEST_HOLD_WRITES=<ms> holds back every durable write of a ledger
 * (a file's write and fdatasync, a shared store's insert) by that long, so that a test can tell
 * a request sent after its intent was recorded from one sent while the intent was still on its
 * way (test/e2e/intent-before-request.test.ts). Unset, it costs one resolved promise; a release build
 * refuses to start with it set (src/lib/crashPoints.ts).
 */
const heldMs = Number(process.env[HOLD_WRITES_VARIABLE] ?? 0);

export function heldWrite(): Promise<void> {
  return heldMs > 0 ? new Promise((resolve) => setTimeout(resolve, heldMs)) : Promise.resolve();
}
