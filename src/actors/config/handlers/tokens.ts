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

/**
 * Takes a deleted route's or organisation's id out of every live token's perimeter, in the
 * deletion's transaction: an id a new route or organisation takes later is not reached by a token
 * minted for the one that was deleted (spec 5 rule 2; docs/core.md). `*` stays `*`. Returns the
 * names of the tokens changed, for the deletion's line in the trail.
 */
export async function leavePerimeters(em: EntityManager, field: 'routes' | 'organisations', id: string): Promise<string[]> {
  const changed: string[] = [];
  for (const t of await em.find(Token, { revokedAt: null })) {
    const named = t[field];
    if (!named?.includes(id)) continue;
    t[field] = named.filter((n) => n !== id);
    changed.push(t.name);
  }
  return changed;
}

/** The trail's words for `leavePerimeters`' answer: '' when no token named it. */
export function perimetersLeft(tokens: readonly string[]): string {
  if (tokens.length === 0) return '';
  const shown = tokens.slice(0, 10).map((n) => `"${n}"`).join(', ') + (tokens.length > 10 ? ` and ${tokens.length - 10} more` : '');
  return `, taken out of the perimeter of ${tokens.length === 1 ? 'the token' : `${tokens.length} tokens:`} ${shown}`;
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
