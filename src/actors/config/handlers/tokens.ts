import { Token } from '../../../store/entities.ts';
import { createToken } from '../../../core/tokens/create.ts';
import type { ConfigCalls, TokenRecord } from '../messages.ts';
import { write, type WriteDeps } from './deps.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

type TokenCalls = Pick<ConfigCalls, 'token.create' | 'token.list' | 'token.revoke'>;

function record(t: Token): TokenRecord {
  return { id: t.id, name: t.name, kind: t.kind, account: t.account ?? null, routes: t.routes ?? null, roles: t.roles ?? null, createdAt: t.createdAt, revokedAt: t.revokedAt ?? null };
}

export function tokenHandlers(deps: WriteDeps): ActorHandlers<TokenCalls> {
  return {
    // mintToken writes its own change row, in createToken's transaction.
    'token.create': async (req) => {
      const minted = await createToken(deps.store.em(), req, deps.now());
      await deps.publish();
      return minted;
    },
    'token.list': async () => (await deps.store.em().find(Token, {}, { orderBy: { createdAt: 'asc', id: 'asc' } })).map(record),
    'token.revoke': ({ id }) => write(deps, 'token', async (em) => (await em.nativeUpdate(Token, { id, revokedAt: null }, { revokedAt: deps.now() })) > 0),
  };
}
