import { UsageError } from '../errors';

/** Checked at start-up (cli.ts), so this file imports nothing heavy. */
const STATE_URL_PASSWORD_RULE = 'must not hold a password (flags end up in shell history and process lists): use PGPASSWORD, ~/.pgpass or a PGSERVICE';

/** A state URL given as a flag: anything but a password in it (`--state-url`, `profiles add --state-url`). */
export function checkStateUrlFlag(url: string, flag: string): string {
  let password = '';
  try {
    const parsed = new URL(url);
    password = parsed.password || (parsed.searchParams.get('password') ?? '');
  } catch {
    // Not a URL: said when the store is opened, in the words of the state URL's rule.
  }
  if (password !== '') throw new UsageError(`${flag} ${STATE_URL_PASSWORD_RULE}`, { details: { [flag]: [STATE_URL_PASSWORD_RULE] } });
  return url;
}
