import { sanitizeLine } from './sanitize';

const UNITS: ReadonlyArray<[name: string, milliseconds: number]> = [
  ['year', 365 * 24 * 3600_000],
  ['month', 30 * 24 * 3600_000],
  ['day', 24 * 3600_000],
  ['hour', 3600_000],
  ['minute', 60_000],
];

/**
 * `in 7 days`, `3 hours ago`, `just now`: the largest unit the distance fills at least once,
 * rounded to the nearest whole one, so that a 7-day link made a moment ago reads "in 7 days".
 */
export function relativeTime(target: Date, now: Date): string {
  const difference = target.getTime() - now.getTime();
  const distance = Math.abs(difference);
  for (const [name, size] of UNITS) {
    if (distance >= size) {
      const count = Math.round(distance / size);
      const amount = `${count} ${name}${count === 1 ? '' : 's'}`;
      return difference > 0 ? `in ${amount}` : `${amount} ago`;
    }
  }
  return 'just now';
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/**
 * A timestamp for people (`2026-11-23 10:15 UTC (in 6 days)`) or for programs (the service's own
 * string, unchanged). A value that is not a date is shown as it came, sanitised.
 */
export function formatTimestamp(value: unknown, options: { readable: boolean; now: Date }): string {
  const raw = sanitizeLine(value);
  if (!options.readable || typeof value !== 'string') return raw;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return raw;
  const day = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  const time = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}`;
  return `${day} ${time} UTC (${relativeTime(date, options.now)})`;
}

const READABLE = /^(\d{4}-\d\d-\d\d) \d\d:\d\d UTC \(([^)]*)\)$/;

/**
 * The shorter forms of a readable timestamp, for a narrow table: `2026-11-23 (in 6 days)`, then
 * `2026-11-23`. None for anything else (a value as it came, `-`). `--json` keeps the full value.
 */
export function shorterTimestamps(readable: string): string[] {
  const match = READABLE.exec(readable);
  return match === null ? [] : [`${match[1]} (${match[2]})`, match[1]!];
}
