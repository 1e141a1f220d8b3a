/**
 * Sealing with the master key: AES-256-GCM, a fresh 96-bit nonce per value, and the row's own
 * identity as associated data, so a sealed value copied onto another row does not open there.
 * Format: `v1.<nonce>.<tag>.<ciphertext>`, each part base64url.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export class UnsealError extends Error {
  override readonly name = 'UnsealError';
  readonly code = 'vault.unsealable';
}

export function seal(key: Buffer, context: string, plain: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', nonce, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

/** Opens a sealed value; a different master key (or a damaged row) throws UnsealError. */
export function unseal(key: Buffer, context: string, sealed: string): string {
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== 'v1') throw new UnsealError(`the sealed value of ${context} is not in a known format`);
  const [, nonce, tag, body] = parts.map((p) => Buffer.from(p, 'base64url')) as [Buffer, Buffer, Buffer, Buffer];
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    throw new UnsealError(`${context} cannot be unsealed with this node's vault master key (GATEWAY_VAULT_KEY or vault.key differs from the node that sealed it)`);
  }
}
