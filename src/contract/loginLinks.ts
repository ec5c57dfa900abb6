import { EXPIRY_HOURS } from './rules';

/** `expiry_hours` must be a whole number of hours within the contract's range. */
export function isValidExpiryHours(value: number): boolean {
  return Number.isInteger(value) && value >= EXPIRY_HOURS.min && value <= EXPIRY_HOURS.max;
}

/**
 * Whether `candidate` is an HTTPS URL on one of `permittedDomains` (the domain itself or a
 * subdomain). The WHATWG parser decides what the host is, so look-alikes such as
 * `https://acme.example.evil.test`, `https://acme.example@evil.test` or `https://evil.test\@acme.example`
 * resolve to the host a browser would visit. User-info is refused outright.
 */
export function isPermittedRedirectUrl(candidate: string, permittedDomains: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '') return false;
  const host = url.hostname.toLowerCase();
  return permittedDomains.some((domain) => {
    const permitted = domain.toLowerCase();
    return host === permitted || host.endsWith(`.${permitted}`);
  });
}
