import type { EntityManager } from '@mikro-orm/core';
import { GatewayError } from '../../http/errors.ts';
import { assertOrganisationExists, assertRolesExist, assertRoutesExist, findAccount } from '../references.ts';
import { mintToken, type MintedToken, type TokenRequest } from './mint.ts';

/**
 * Mints a token after checking what it names: the account (id or name), and a schedules token's
 * perimeter. Used by the API (through the config actor) and by `meerkat token create`.
 */
export async function createToken(em: EntityManager, req: TokenRequest, now: number): Promise<MintedToken> {
  return em.transactional(async (tx) => {
    let account: string | null = null;
    if (req.account) {
      const found = await findAccount(tx, req.account);
      if (!found) throw new GatewayError('account.unknown', `No account has the id or name "${req.account}".`, 'account');
      account = found.id;
    }
    await assertRoutesExist(tx, req.routes ?? [], 'routes');
    await assertRolesExist(tx, req.roles ?? [], 'roles');
    for (const id of req.organisations ?? []) if (id !== '*') await assertOrganisationExists(tx, id, 'organisations');
    return mintToken(tx, { ...req, account }, now);
  });
}
