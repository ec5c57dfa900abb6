/**
 * Named crash points, for the durability tests only. `TAXPREP_TEST_CRASH_AT=<point>` (or
 * `<point>@<n>`, the n-th time the point is reached; the first by default) ends the process with
 * SIGKILL at that point, so that a test proves a guarantee at the exact moment it is most at risk
 * instead of hoping that a timed kill lands there. The variable is read once, at the first point
 * reached; it is not a user setting, is left out of help and docs, and a release build refuses to
 * start with it set (`refuseCrashPointsInRelease`).
 *
 * Every point of the project is named in `CRASH_POINTS`, so that a test cannot name a point the
 * code no longer has: an unknown name is an error at start, not a test that silently never kills.
 */
export const CRASH_POINTS = [
  // The batch engine's tracked write (src/batch/send.ts), around every write of every bulk job.
  'batch.before-intent',
  'batch.after-intent',
  'batch.after-request',
  'batch.after-record',
  // Webhooks (src/hooks/): around a delivery attempt, and between queueing a pass's changes and recording them as seen.
  'hooks.before-attempt',
  'hooks.after-attempt',
  'hooks.after-queue',
  // The mock's durable commit of a request's changes (src/mock/persistence.ts).
  'mock.before-commit',
  'mock.after-commit',
  // A watch pass (src/commands/watch/watch.ts): its state staged, its changes printed, the state in place.
  'watch.before-print',
  'watch.after-print',
  'watch.after-commit',
  // Moving a profile's key into the credential store (src/commands/profiles/secure.ts).
  'secure.after-store',
  'secure.after-verify',
  'secure.after-file',
  'secure.after-hooks-store',
] as const;

export type CrashPointName = (typeof CRASH_POINTS)[number];

export const CRASH_AT_VARIABLE = 'TAXPREP_TEST_CRASH_AT';
export const HOLD_WRITES_VARIABLE = 'TAXPREP_TEST_HOLD_WRITES';

interface CrashPlan {
  point: CrashPointName;
  /** Which arrival at the point kills (1 = the first). */
  arrival: number;
}

let plan: CrashPlan | null | undefined;
let arrivals = 0;

/** Reads `TAXPREP_TEST_CRASH_AT`; throws on a name no code has or a count that is not a positive whole number. */
export function parseCrashPlan(value: string | undefined): CrashPlan | null {
  if (value === undefined || value === '') return null;
  const match = /^([a-z-]+\.[a-z-]+)(?:@(\d+))?$/.exec(value);
  const point = match?.[1] as CrashPointName | undefined;
  if (point === undefined || !CRASH_POINTS.includes(point)) {
    throw new Error(`${CRASH_AT_VARIABLE}=${value}: not a crash point; the points are ${CRASH_POINTS.join(', ')}, optionally followed by @<n>`);
  }
  const arrival = match?.[2] === undefined ? 1 : Number(match[2]);
  if (!Number.isSafeInteger(arrival) || arrival < 1) throw new Error(`${CRASH_AT_VARIABLE}=${value}: the count after @ must be a whole number from 1`);
  return { point, arrival };
}

/** The process dies here, by SIGKILL, when the test's plan names this point and this arrival. */
export function crashPoint(point: CrashPointName): void {
  if (plan === undefined) plan = parseCrashPlan(process.env[CRASH_AT_VARIABLE]);
  if (plan === null || plan.point !== point) return;
  arrivals += 1;
  if (arrivals === plan.arrival) process.kill(process.pid, 'SIGKILL');
}

/** For a release build: crash points are a test's tool, never a shipped switch. */
export function refuseCrashPointsInRelease(env: NodeJS.ProcessEnv = process.env): string | undefined {
  // TAXPREP_TEST_HOLD_WRITES (src/lib/heldWrites.ts) is the other test-only switch of the durability tests.
  const set = [CRASH_AT_VARIABLE, HOLD_WRITES_VARIABLE].find((name) => env[name] !== undefined);
  return set === undefined ? undefined : `${set} is a test-only switch and this is a release build; unset it.`;
}
