import { createHash, randomBytes } from 'node:crypto';

/** Opaque secrets (tokens, session cookies): 32 random bytes, base64url, with a readable prefix. */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** Secrets are stored only as their SHA-256. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function newId(): string {
  return randomBytes(12).toString('hex');
}
