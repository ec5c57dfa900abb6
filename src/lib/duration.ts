/**
 * The one duration grammar and formatter, for the CLI's flags, its messages and the mock's controls
 * (zod-free and client-free, so the mock and `--help` may load it).
 *
 * Grammar: one or more `<number><unit>` parts, units ms, s, m, h, d (any case), decimals allowed,
 * parts optionally apart by spaces: `500ms`, `1.5s`, `90m`, `1h30m`, `2m 5s`, `7d`. A unit is
 * always required, by every flag alike: `--within 24` could as well mean hours as seconds, so a bare
 * number is refused with the units it may have meant (`bareNumberNote`).
 */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d)\s*)+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const BARE_NUMBER = /^\d+(?:\.\d+)?$/;

/** The rule for messages: `--within must be <rule>`. */
export function durationRule(): string {
  return 'a duration such as 500ms, 30s, 90m, 24h, 7d or 1h30m';
}

/** For the message refusing a duration: what a bare number lacks (`; 8 has no unit: 8s, 8m, 8h or 8d?`), else nothing. */
export function bareNumberNote(text: string): string {
  const value = text.trim();
  return BARE_NUMBER.test(value) ? `; ${value} has no unit: ${value}s, ${value}m, ${value}h or ${value}d?` : '';
}

/** Milliseconds (rounded to a whole one), or undefined when `text` is not a duration. Zero is a duration. */
export function parseDuration(text: string): number | undefined {
  const value = text.trim().toLowerCase();
  if (!DURATION.test(value)) return undefined;
  const ms = [...value.matchAll(PART)].reduce((sum, [, amount, unit]) => sum + Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS], 0);
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

// Above a minute, the two largest units, the smaller rounded: "2m 5s", "1h 30m", "2d 3h".
const SCALES = [
  { unit: 'd', ms: UNIT_MS.d, rest: 'h', restMs: UNIT_MS.h },
  { unit: 'h', ms: UNIT_MS.h, rest: 'm', restMs: UNIT_MS.m },
  { unit: 'm', ms: UNIT_MS.m, rest: 's', restMs: UNIT_MS.s },
] as const;

/** How long something takes, for people: "250ms", "1.5s", "12s", "2m 5s", "1h 30m", "2d 3h". */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 999.5) return `${Math.round(ms)}ms`;
  if (ms < 9_950) return `${Number((ms / 1000).toFixed(1))}s`;
  for (const scale of SCALES) {
    // Compared after rounding, so 59.6 s reads "1m" rather than "60s".
    const rests = Math.round(ms / scale.restMs);
    const perUnit = scale.ms / scale.restMs;
    if (rests >= perUnit) {
      const whole = Math.floor(rests / perUnit);
      const rest = rests % perUnit;
      return rest === 0 ? `${whole}${scale.unit}` : `${whole}${scale.unit} ${rest}${scale.rest}`;
    }
  }
  return `${Math.round(ms / 1000)}s`;
}
