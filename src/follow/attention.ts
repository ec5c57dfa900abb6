import type { ItemFacts } from './changes';

/**
 * The order `taxprep status` shows outstanding items in: highest priority first, then the oldest
 * request. The contract lists `high` and `medium` and says the full set is not shown, so any
 * other value sorts after those two, in the order it was first seen (a `low` or an `urgent` the
 * service adds later is shown, never dropped, and never guessed to outrank `high`).
 */
const KNOWN_PRIORITIES = ['high', 'medium'];

export function sortByPriority<T extends Pick<ItemFacts, 'priority' | 'requested_at'>>(items: readonly T[]): T[] {
  const order = [...new Set([...KNOWN_PRIORITIES, ...items.map((item) => item.priority)])];
  return [...items].sort(
    (a, b) => order.indexOf(a.priority) - order.indexOf(b.priority) || timeOf(a.requested_at) - timeOf(b.requested_at),
  );
}

/** An item without a readable time sorts after the dated ones of its priority. */
function timeOf(value: string | null): number {
  const time = value === null ? NaN : Date.parse(value);
  return Number.isNaN(time) ? Number.POSITIVE_INFINITY : time;
}

/** Login links (from the ledger) that expire within `withinMs` of `now`, or have expired, soonest first. */
export function expiringLinks<T extends { expires_at: string }>(links: readonly T[], now: Date, withinMs: number): T[] {
  const limit = now.getTime() + withinMs;
  return links.filter((link) => Date.parse(link.expires_at) <= limit).sort((a, b) => Date.parse(a.expires_at) - Date.parse(b.expires_at));
}
