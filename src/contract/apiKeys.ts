/** API keys look like `<prefix>_<random>`; the prefix is fixed for the service. */
export const API_KEY_PREFIX = 'tpk';
export const API_KEY_PATTERN = /^tpk_[A-Za-z0-9]{20,128}$/;
export const API_KEY_HINT = `API keys begin with "${API_KEY_PREFIX}_" followed by 20 or more letters and digits; check that the whole key was copied.`;

export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/** The only form in which a key is ever shown: its prefix and its last four characters. */
export function redactApiKey(key: string): string {
  if (!isWellFormedApiKey(key)) return key.length > 0 ? '(malformed key, hidden)' : '(none)';
  return `${API_KEY_PREFIX}_…${key.slice(-4)}`;
}
