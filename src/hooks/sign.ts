import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks v1 signing (https://www.standardwebhooks.com): a secret is `whsec_` and the
 * base64 of random bytes; a signature is `v1,` and the base64 HMAC-SHA256, keyed with the
 * secret's decoded bytes, of `<webhook-id>.<webhook-timestamp>.<body>`. Several live secrets (a
 * rotation's overlap) give several signatures, space-separated.
 */
export const SECRET_PREFIX = 'whsec_';
/** The spec asks for 24 to 64 bytes. */
const SECRET_BYTES = 32;

export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export function isSecret(text: string): boolean {
  return text.startsWith(SECRET_PREFIX) && Buffer.from(text.slice(SECRET_PREFIX.length), 'base64').length >= 24;
}

/** Each secret's decoded bytes: a run signs every delivery with the same one or two. */
const keys = new Map<string, Buffer>();

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) keys.set(secret, (key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')));
  return key;
}

export function signatureOf(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => signatureOf(secret, id, timestamp, body)).join(' ');
}

/** How far a receiver lets a timestamp be from its clock, as the reference libraries do. */
export const TOLERANCE_SECONDS = 5 * 60;

/** For `hooks listen`: why a request does not verify, or undefined when it does. */
export function verificationProblem(secret: string, headers: Record<string, string | undefined>, body: string, nowSeconds: number): string | undefined {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (id === undefined || timestamp === undefined || signatures === undefined) return 'missing webhook-id, webhook-timestamp or webhook-signature';
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - seconds) > TOLERANCE_SECONDS) return `webhook-timestamp ${timestamp} is not within ${TOLERANCE_SECONDS}s of now`;
  const expected = Buffer.from(signatureOf(secret, id, seconds, body));
  const match = signatures.split(' ').some((signature) => {
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return match ? undefined : 'no signature matches the secret';
}

/** A secret as output shows it: the prefix and the last 4 characters. */
export function redactSecret(secret: string): string {
  return `${SECRET_PREFIX}…${secret.slice(-4)}`;
}
