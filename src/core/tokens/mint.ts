import type { EntityManager } from '@mikro-orm/core';
import { Change, Token } from '../../store/entities.ts';
import { hashSecret, newId, newSecret } from '../secrets.ts';
import type { TokenKind } from './kinds.ts';


export interface TokenRequest {
  readonly name: string;
  readonly kind: TokenKind;
  readonly account?: string | null;
  readonly routes?: readonly string[] | null;
  readonly roles?: readonly string[] | null;
  readonly organisations?: readonly string[] | null;
}

export interface MintedToken {
  readonly id: string;
  readonly name: string;
  readonly kind: TokenKind;
  /** Shown once: only its hash is stored. */
  readonly token: string;
}

/** Writes a token and the change row that tells every node's snapshot about it. */
export async function mintToken(em: EntityManager, req: TokenRequest, now: number): Promise<MintedToken> {
  const secret = newSecret('mk_');
  const id = newId();
  em.create(Token, {
    id,
    name: req.name,
    kind: req.kind,
    hash: hashSecret(secret),
    account: req.account ?? null,
    routes: req.routes ? [...req.routes] : null,
    roles: req.roles ? [...req.roles] : null,
    organisations: req.organisations ? [...req.organisations] : null,
    createdAt: now,
    revokedAt: null,
  });
  em.create(Change, { kind: 'token', at: now });
  await em.flush();
  return { id, name: req.name, kind: req.kind, token: secret };
}
