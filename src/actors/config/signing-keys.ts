import type { Store } from '../../store/orm.ts';
import { Change, SigningKeyRow } from '../../store/entities.ts';
import { seal } from '../../core/vault/seal.ts';
import { generateSigningKey } from '../../pipeline/identity.ts';

/**
 * The first node to start creates the key that signs identity JWTs; every node then signs with
 * the oldest one. Two nodes racing both insert a key: both are published in the JWKS, and the
 * oldest signs everywhere, so tokens verify whichever node issued them.
 */
export async function ensureSigningKey(store: Store, masterKey: Buffer, now: number): Promise<boolean> {
  const em = store.em();
  if ((await em.count(SigningKeyRow, {})) > 0) return false;
  const key = generateSigningKey();
  em.create(SigningKeyRow, { kid: key.kid, sealed: seal(masterKey, `signing-key/${key.kid}`, key.privateKeyPem), createdAt: now });
  em.create(Change, { kind: 'signing-key', at: now });
  await em.flush();
  return true;
}
