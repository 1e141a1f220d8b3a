import type { EntityManager } from '@mikro-orm/core';
import { Account, Token } from '../../../store/entities.ts';
import type { ChangeNote } from '../../../core/audit/lines.ts';
import { createToken } from '../../../core/tokens/create.ts';
import type { ConfigCalls, TokenRecord } from '../messages.ts';
import { write, type WriteDeps } from '../../write.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

/**
 * A personal token is its account's security (spec 6.1: token.create and token.revoke, detail its
 * name); a token minted for machines (admin, schedules) is a change of the gateway's access.
 */
async function tokenNote(em: EntityManager, t: Token, action: 'token.create' | 'token.revoke'): Promise<ChangeNote> {
  const account = t.account ? await em.findOne(Account, { id: t.account }) : null;
  if (t.kind === 'personal') {
    return { action, part: 'security', target: { kind: 'account', id: t.account ?? undefined, name: account?.name }, organisation: account?.organisation ?? null, detail: t.name };
  }
  const { id: _id, createdAt: _c, ...fields } = record(t);
  return {
    action, target: { kind: 'token', id: t.id, name: t.name },
    ...(action === 'token.create' ? { before: null, after: { ...fields, account: account?.name ?? null } } : { detail: 'revoked' }),
  };
}

type TokenCalls = Pick<ConfigCalls, 'token.create' | 'token.list' | 'token.revoke'>;

function record(t: Token): TokenRecord {
  return { id: t.id, name: t.name, kind: t.kind, account: t.account ?? null, routes: t.routes ?? null, roles: t.roles ?? null, organisations: t.organisations ?? null, createdAt: t.createdAt, revokedAt: t.revokedAt ?? null };
}

export function tokenHandlers(deps: WriteDeps): ActorHandlers<TokenCalls> {
  return {
    'token.create': (req) => write(deps, 'token', async (em, audit) => {
      const minted = await createToken(em, req, deps.now());
      const token = await em.findOneOrFail(Token, { id: minted.id });
      audit.note(await tokenNote(em, token, 'token.create'));
      return minted;
    }),
    'token.list': async () => (await deps.store.em().find(Token, {}, { orderBy: { createdAt: 'asc', id: 'asc' } })).map(record),
    'token.revoke': ({ id }) => write(deps, 'token', async (em, audit) => {
      if ((await em.nativeUpdate(Token, { id, revokedAt: null }, { revokedAt: deps.now() })) === 0) return false;
      audit.note(await tokenNote(em, await em.findOneOrFail(Token, { id }), 'token.revoke'));
      return true;
    }),
  };
}
