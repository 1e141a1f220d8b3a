import { randomBytes } from 'node:crypto';
import type { Store } from '../../store/orm.ts';
import { Account, Change } from '../../store/entities.ts';
import { newId } from '../secrets.ts';

export interface RootOutcome {
  readonly created: boolean;
  /** The generated password, when none was given: shown once by the caller, never stored. */
  readonly generatedPassword?: string;
}

/** First start creates the account `root` (CONTRACT.md); later starts leave it alone. */
export async function ensureRoot(
  store: Store,
  hash: (password: string) => Promise<string>,
  given: string | undefined,
  now: number,
): Promise<RootOutcome> {
  const em = store.em();
  if (await em.findOne(Account, { name: 'root' })) return { created: false };
  const password = given ?? randomBytes(18).toString('base64url');
  em.create(Account, {
    id: newId(), name: 'root', passwordHash: await hash(password), capabilities: ['root'], roles: [],
    organisation: null, disabled: false, createdAt: now, updatedAt: now,
  });
  em.create(Change, { kind: 'account', at: now });
  try {
    await em.flush();
  } catch (err) {
    // Another node of the cluster created it first: that root stands.
    if (await store.em().findOne(Account, { name: 'root' })) return { created: false };
    throw err;
  }
  return given === undefined ? { created: true, generatedPassword: password } : { created: true };
}
