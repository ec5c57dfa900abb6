/**
 * API keys. The contract fixes only their shape, `<key_prefix>_<random_string>`; the prefix is the
 * service's and not shown. The client checks that shape alone (any prefix); the mock issues `tpk_`
 * keys and holds them to its own stricter rule.
 */

/** The contract's shape: a prefix of letters and digits, an underscore, then the random part (no spaces or controls). */
export const CONTRACT_API_KEY_PATTERN = /^[A-Za-z0-9]+_[\x21-\x7e]+$/;
export const CONTRACT_API_KEY_HINT = 'API keys have the form <prefix>_<random>, as issued by the service operator; check that the whole key was copied.';
const MAX_KEY_LENGTH = 1024;

/** The client's check: the contract's shape, whatever the prefix. */
export function hasApiKeyShape(key: string): boolean {
  return key.length <= MAX_KEY_LENGTH && CONTRACT_API_KEY_PATTERN.test(key);
}

/** The keys the mock issues and accepts: its prefix, `tpk`, and 20 to 128 letters and digits. */
export const API_KEY_PREFIX = 'tpk';
export const API_KEY_PATTERN = /^tpk_[A-Za-z0-9]{20,128}$/;
export const API_KEY_HINT = `API keys begin with "${API_KEY_PREFIX}_" followed by 20 or more letters and digits; check that the whole key was copied.`;

/** The mock's rule (see above); the client uses `hasApiKeyShape`. */
export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/**
 * The only form in which a key is ever shown: its prefix and the last four characters of its
 * random part, or the prefix alone when that part is too short to hide anything by cutting it.
 */
export function redactApiKey(key: string): string {
  if (!hasApiKeyShape(key)) return key.length > 0 ? '(malformed key, hidden)' : '(none)';
  const underscore = key.indexOf('_');
  const random = key.slice(underscore + 1);
  return `${key.slice(0, underscore)}_…${random.length >= 12 ? random.slice(-4) : ''}`;
}

/**
 * Replaces `key` wherever a text from the service repeats it (an error message quoting the
 * Authorization header, an echoed URL) by its redacted form: written plainly, percent-encoded or
 * as JSON `\u` escapes, in any mix of the three, character by character.
 */
export function keyRedactor(key: string | undefined): (text: string) => string {
  if (key === undefined || key === '') return (text) => text;
  const redacted = redactApiKey(key);
  let pattern: RegExp | undefined;
  // Every form but the plain one begins with `%` or `\`: a text with neither can hold the key only
  // as written. Such texts (most headers and bodies) skip the pattern, whose first uses cost V8
  // about 2.5 ms to compile (every API command's start-up, bench/startup.bench.js).
  return (text) => (text.includes('%') || text.includes('\\') ? text.replace((pattern ??= keyPattern(key)), redacted) : text.replaceAll(key, redacted));
}

/** `key` written plainly, percent-encoded or as JSON `\u` escapes, in any mix, character by character. */
function keyPattern(key: string): RegExp {
  const anyCase = (hex: string) => [...hex].map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit)).join('');
  const characters = [...key].map((character) => {
    const hex = anyCase(character.charCodeAt(0).toString(16).padStart(2, '0'));
    const forms = [character.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'), `%${hex}`, `\\\\u00${hex}`];
    if (character === '/') forms.push('\\\\/');
    return `(?:${forms.join('|')})`;
  });
  return new RegExp(characters.join(''), 'g');
}
