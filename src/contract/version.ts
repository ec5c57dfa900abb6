/** The contract's version segment, which precedes every path (zod-free, for start-up paths). */
export const BASE_PATH = '/v1beta';

/** Whether a base URL's path ends in the version segment, as the contract's `{base_url}` does (a trailing slash aside). */
export function endsInVersion(baseUrl: string): boolean {
  return new URL(baseUrl).pathname.replace(/\/+$/, '').endsWith(BASE_PATH);
}
