import type { EntityManager } from '@mikro-orm/core';
import { Account, Change, Session, Token } from '../../store/entities.ts';
import type { Snapshot } from './messages.ts';

/** Reads the configuration tables into the plain snapshot the main thread serves from. */
export async function loadSnapshot(em: EntityManager, now: number): Promise<Snapshot> {
  const [accounts, sessions, tokens, version] = await Promise.all([
    em.find(Account, {}),
    em.find(Session, { expiresAt: { $gt: now } }),
    em.find(Token, { revokedAt: null }),
    latestChange(em),
  ]);
  return {
    version,
    accounts: accounts.map((a) => ({
      id: a.id, name: a.name, passwordHash: a.passwordHash, capabilities: a.capabilities,
      roles: a.roles, organisation: a.organisation ?? null, disabled: a.disabled,
    })),
    sessions: sessions.map((s) => ({ id: s.id, account: s.account, expiresAt: s.expiresAt })),
    tokens: tokens.map((t) => ({
      id: t.id, name: t.name, kind: t.kind, hash: t.hash, account: t.account ?? null,
      routes: t.routes ?? null, roles: t.roles ?? null,
    })),
  };
}

export async function latestChange(em: EntityManager): Promise<number> {
  const [row] = await em.find(Change, {}, { orderBy: { id: 'desc' }, fields: ['id'], limit: 1 });
  return row?.id ?? 0;
}
