/**
 * Strings from the service are printed to terminals, so a hostile or broken value must not be able
 * to move the cursor, rewrite the title, hide text or fake a line. Everything that is not printable
 * text goes: ANSI/OSC escape sequences whole, C0 and C1 controls, DEL, and the bidirectional
 * overrides that reorder what a reader sees (Trojan Source).
 */

// CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), other two-character escapes, and the 8-bit CSI.
const ESCAPE_SEQUENCE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]|\u009b[0-?]*[ -/]*[@-~]/g;
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const CONTROLS_EXCEPT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;
const LINE_BREAKS = /\r\n|[\n\r\t\u2028\u2029]/g;

function stripEscapes(value: string): string {
  return value.replace(ESCAPE_SEQUENCE, '').replace(BIDI_CONTROLS, '');
}

/** One line of printable text: line breaks and tabs become spaces (tables and TSV stay aligned). */
export function sanitizeLine(value: unknown): string {
  if (value === null || value === undefined) return '';
  return stripEscapes(String(value)).replace(LINE_BREAKS, ' ').replace(CONTROLS_EXCEPT_NEWLINE, '');
}

/** Printable text that keeps its line breaks (summaries, descriptions in cards). */
export function sanitizeText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return stripEscapes(String(value))
    .replace(/\r\n|[\r\u2028\u2029]/g, '\n')
    .replace(/\t/g, ' ')
    .replace(CONTROLS_EXCEPT_NEWLINE, '');
}
