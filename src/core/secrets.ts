import { hash, randomBytes } from 'node:crypto';

/** Opaque secrets (tokens, session cookies): 32 random bytes, base64url, with a readable prefix. */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

/**
 * Secrets are stored only as their SHA-256. Every data-plane request with a token hashes it: the
 * one-shot `hash` (Node 20.12) makes no Hash object and takes a third of `createHash`'s time.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function newId(): string {
  return randomBytes(12).toString('hex');
}
