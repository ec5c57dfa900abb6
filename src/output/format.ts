import { colorStatus, type Palette } from './colors';
import { formatTimestamp } from './dates';
import { clampPercent, formatBytes, progressBar } from './progress';
import { sanitizeLine, sanitizeText } from './sanitize';

/**
 * Turns service values into printable cells. Every value passes through the sanitiser here, so a
 * command cannot print a service string raw by forgetting to. For people (a terminal): readable
 * dates, coloured statuses, progress bars (tables shorten free text to the terminal's width). For
 * programs: the values as sent.
 */
export interface Format {
  text(value: unknown): string;
  /** First and last name; either may be missing from a tolerant answer. */
  name(first: unknown, last: unknown): string;
  multiline(value: unknown): string;
  date(value: unknown): string;
  status(value: unknown): string;
  progress(value: unknown): string;
  bytes(value: unknown): string;
}

export function createFormat(options: { readable: boolean; colors: Palette; now: Date }): Format {
  const { readable, colors, now } = options;
  return {
    text: (value) => sanitizeLine(value),
    name: (first, last) => sanitizeLine([first, last].filter((part) => part !== undefined && part !== null && part !== '').join(' ')),
    multiline: (value) => sanitizeText(value),
    date: (value) => (value === null || value === undefined ? '-' : formatTimestamp(value, { readable, now })),
    status: (value) => colorStatus(colors, sanitizeLine(value)),
    progress: (value) => {
      if (typeof value !== 'number') return sanitizeLine(value);
      return readable ? progressBar(value) : `${clampPercent(value)}%`;
    },
    bytes: (value) => {
      if (typeof value !== 'number') return sanitizeLine(value);
      return readable ? formatBytes(value) : String(value);
    },
  };
}
