import type { Context } from '../../types';
import { UsageError } from '../../errors';

/**
 * "Now" for the renewal window: the local clock, or `TAXPREP_NOW` (an ISO timestamp). The
 * override is a testing aid: links' expiry times come from the service's clock, and the mock's
 * virtual clock can be moved ahead of ours.
 */
export function renewalNow(ctx: Pick<Context, 'env' | 'clock'>): Date {
  const override = ctx.env.TAXPREP_NOW;
  if (override === undefined || override === '') return ctx.clock.now();
  const parsed = new Date(override);
  if (Number.isNaN(parsed.getTime())) throw new UsageError(`TAXPREP_NOW must be an ISO 8601 timestamp such as 2026-11-23T10:00:00Z (got ${JSON.stringify(override)})`);
  return parsed;
}
