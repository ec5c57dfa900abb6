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

/** Text of any value the service sent; an object or array (where text was expected) as its JSON. */
function textOf(value: unknown): string {
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function stripEscapes(value: string): string {
  return value.replace(ESCAPE_SEQUENCE, '').replace(BIDI_CONTROLS, '');
}

/** One line of printable text: line breaks and tabs become spaces (tables and TSV stay aligned). */
export function sanitizeLine(value: unknown): string {
  if (value === null || value === undefined) return '';
  return stripEscapes(textOf(value)).replace(LINE_BREAKS, ' ').replace(CONTROLS_EXCEPT_NEWLINE, '');
}

/** Printable text that keeps its line breaks (summaries, descriptions in cards). */
export function sanitizeText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return stripEscapes(textOf(value))
    .replace(/\r\n|[\r\u2028\u2029]/g, '\n')
    .replace(/\t/g, ' ')
    .replace(CONTROLS_EXCEPT_NEWLINE, '');
}

/**
 * The service's strings inside a structure (an error's `details`), each made one printable line;
 * keys too, and the result has no prototype, so no key from the service can reach one.
 */
export function sanitizeDeep(value: unknown): unknown {
  if (typeof value === 'string') return sanitizeLine(value);
  if (Array.isArray(value)) return value.map(sanitizeDeep);
  if (value === null || typeof value !== 'object') return value;
  const clean: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) clean[sanitizeLine(key)] = sanitizeDeep(item);
  return clean;
}

// JSON.stringify escapes C0 controls but leaves these as they are: invisible reordering and
// line-separating characters that a terminal would act on.
const JSON_UNSAFE = /[\u0080-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** JSON text with C1 controls, bidi controls and U+2028/9 written as `\uXXXX`: the same data, harmless on a terminal. */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(JSON_UNSAFE, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
