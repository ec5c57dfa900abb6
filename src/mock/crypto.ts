import { createHash, randomBytes } from 'node:crypto';

/** 192 random bits, base64url: link tokens and generated API keys. */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

