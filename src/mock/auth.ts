import { hash, timingSafeEqual } from 'node:crypto';
import { API_KEY_HINT, isWellFormedApiKey, type Permission } from '../contract';
import type { MockDeps } from './deps';
import { MockError } from './errors';
import type { ApiKeyRecord, PartnerRecord } from './state';

export interface Authenticated {
  partner: PartnerRecord;
  apiKey: ApiKeyRecord;
}

const CHALLENGE = { 'www-authenticate': 'Bearer' };

/** The key of an `Authorization: Bearer <key>` header, or undefined when none was sent in that form. */
export function bearerKey(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}

/**
 * Resolves the partner behind the request's key and checks that the key may use `permission`.
 * The key is looked up by its SHA-256 digest (as `key_sha256` holds it, see `sha256Hex`), compared
 * with every stored digest in constant time.
 */
export function authenticate(deps: MockDeps, authorization: string | undefined, permission: Permission): Authenticated {
  const auth = identifyCaller(deps, authorization);
  if (!auth.apiKey.permissions.includes(permission)) {
    throw new MockError('INSUFFICIENT_PERMISSIONS', `The API key lacks the permission "${permission}" that this operation requires.`, {
      required_permission: permission,
    });
  }
  return auth;
}

/** The partner behind a valid, unexpired key, whatever it may do; throws `INVALID_API_KEY` or `EXPIRED_API_KEY` otherwise. */
export function identifyCaller(deps: MockDeps, authorization: string | undefined): Authenticated {
  if (authorization === undefined || authorization.trim() === '') {
    throw invalidKey('No API key was sent. Send the header "Authorization: Bearer <API key>".', true);
  }
  const key = bearerKey(authorization);
  if (key === undefined) {
    throw invalidKey('The Authorization header must have the form "Bearer <API key>".', true);
  }
  if (!isWellFormedApiKey(key)) throw invalidKey('The API key is malformed.', true);

  const apiKey = findKey(deps.store.state.apiKeys, presentedDigest(key));
  const partner = apiKey && deps.store.state.partners.find((candidate) => candidate.id === apiKey.partner_id);
  if (!apiKey || !partner) throw invalidKey('The API key is not valid.', false);

  if (apiKey.expires_at !== null && Date.parse(apiKey.expires_at) <= deps.clock.nowMs()) {
    throw new MockError('EXPIRED_API_KEY', `The API key expired at ${apiKey.expires_at}. Ask the service operator for a new key.`, undefined, CHALLENGE);
  }
  return { partner, apiKey };
}

// Decoded once per stored key rather than on every request: authentication is on every request's path.
const storedDigests = new WeakMap<ApiKeyRecord, Buffer>();

function storedDigest(record: ApiKeyRecord): Buffer {
  let digest = storedDigests.get(record);
  if (!digest) {
    digest = Buffer.from(record.key_sha256, 'hex');
    storedDigests.set(record, digest);
  }
  return digest;
}

/**
 * The SHA-256 of a presented key, remembered for the few keys a mock sees: hashing is the largest
 * cost of authenticating, and the same key comes with every request of a client. The remembered
 * digest is still compared with every stored one in constant time. Forgotten wholesale when full,
 * so a caller trying many keys cannot grow it.
 */
const presentedDigests = new Map<string, Buffer>();
const PRESENTED_DIGESTS_MAX = 256;

function presentedDigest(key: string): Buffer {
  let digest = presentedDigests.get(key);
  if (!digest) {
    if (presentedDigests.size >= PRESENTED_DIGESTS_MAX) presentedDigests.clear();
    digest = hash('sha256', key, 'buffer');
    presentedDigests.set(key, digest);
  }
  return digest;
}

/** Visits every stored key whatever matches, so the time taken does not depend on which one matched. */
function findKey(keys: ApiKeyRecord[], digest: Buffer): ApiKeyRecord | undefined {
  let found: ApiKeyRecord | undefined;
  for (const candidate of keys) {
    const stored = storedDigest(candidate);
    if (stored.length === digest.length && timingSafeEqual(stored, digest)) found = candidate;
  }
  return found;
}

function invalidKey(message: string, withHint: boolean): MockError<'INVALID_API_KEY'> {
  return new MockError('INVALID_API_KEY', message, withHint ? { hint: API_KEY_HINT } : undefined, CHALLENGE);
}
