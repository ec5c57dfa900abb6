import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 192 random bits, base64url: link tokens and generated API keys. */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Compares two hex digests in constant time (lengths are public: both are SHA-256). */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
