const FILLED = '█';
const EMPTY = '░';

/** Clamps to 0-100 and rounds, so a bar never overflows whatever the service sends. */
export function clampPercent(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Math.min(100, Math.max(0, Math.round(value)));
}

/** `████░░░░░░ 45%`: the bar is `width` cells, the percentage is always shown as a number too. */
export function progressBar(percent: number, width = 10): string {
  const clamped = clampPercent(percent);
  // Rounded down, so that the bar looks full only at 100%.
  const filled = Math.floor((clamped / 100) * width);
  return `${FILLED.repeat(filled)}${EMPTY.repeat(width - filled)} ${String(clamped).padStart(3)}%`;
}

/** The percentage of a progress bar alone (`45%`), for a narrow table; none for anything else. */
export function shorterProgress(bar: string): string[] {
  const match = new RegExp(`^[${FILLED}${EMPTY}]+ ( *\\d+%)$`).exec(bar);
  return match === null ? [] : [match[1]!];
}

/** A human-sized byte count: `512 B`, `1.5 KB`, `2.0 MB` (powers of 1024). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
