import * as z from 'zod';
import { integer } from '../../contract/rules';
import { parseDuration } from '../../lib/duration';
import { MAX_LATENCY_MS } from '../deps';

/**
 * Rules for the mock's own settings, written once: the `/_mock` controls validate their bodies with
 * them and `taxprep serve` its flags, so a value one accepts the other accepts too. Kept free of
 * the server so that `serve` can check its flags without loading the mock.
 */

export const MAX_ADVANCE_SECONDS = 10 * 366 * 86_400;
export const MAX_RATE_LIMIT_WINDOWS = 5;
export const MAX_WINDOW_SECONDS = 366 * 86_400;

export const rateLimitWindows = z
  .array(z.strictObject({ limit: integer(1, 1_000_000_000), window_seconds: integer(1, MAX_WINDOW_SECONDS) }), { error: 'must be a list' })
  .max(MAX_RATE_LIMIT_WINDOWS, `must have at most ${MAX_RATE_LIMIT_WINDOWS} windows`);

const rate = z.number({ error: 'must be a number from 0 to 1' }).min(0, 'must be a number from 0 to 1').max(1, 'must be a number from 0 to 1');

export const faultSettings = z.strictObject({
  latency_ms: integer(0, MAX_LATENCY_MS).optional(),
  error_rate: rate.optional(),
  drop_rate: rate.optional(),
});

/**
 * `"1d2h30m"` -> seconds, in the one duration grammar (src/lib/duration.ts); undefined for anything
 * else, for a part of a second, zero, or beyond the ten-year cap.
 */
export function durationSeconds(value: string): number | undefined {
  const ms = parseDuration(value);
  if (ms === undefined || ms % 1000 !== 0) return undefined;
  const total = ms / 1000;
  return total > 0 && total <= MAX_ADVANCE_SECONDS ? total : undefined;
}
