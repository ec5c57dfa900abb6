import { sanitizeLine } from './sanitize';

/**
 * One CSV record (RFC 4180) ending in CRLF: a field with a comma, a quote or a line break is
 * quoted, quotes doubled; null and undefined are empty. Text is made one printable line first, and
 * a field that a spreadsheet would run as a formula (`=`, `+`, `-`, `@` first) gets a leading `'`.
 */
export function csvRow(fields: readonly unknown[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  let text = sanitizeLine(value);
  if (/^[=+\-@]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
