/**
 * MikroORM entities, defined without decorators so tsx and tsc read them alike. Times are epoch
 * milliseconds (bigint columns read as numbers): the same on SQLite and PostgreSQL.
 */
import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const Account = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: (p) => ({
    id: p.string().primary(),
    name: p.string().unique(),
    passwordHash: p.string(),
    capabilities: p.json<string[]>(),
    roles: p.json<string[]>(),
    organisation: p.string().nullable(),
    disabled: p.boolean().default(false),
    createdAt: p.bigint('number'),
    updatedAt: p.bigint('number'),
  }),
});
export type Account = InferEntity<typeof Account>;

export const Session = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: (p) => ({
    /** SHA-256 of the cookie value: the cookie itself is never stored. */
    id: p.string().primary(),
    account: p.string().index(),
    createdAt: p.bigint('number'),
    expiresAt: p.bigint('number'),
  }),
});
export type Session = InferEntity<typeof Session>;

export const Token = defineEntity({
  name: 'Token',
  tableName: 'tokens',
  properties: (p) => ({
    id: p.string().primary(),
    name: p.string(),
    kind: p.string(),
    /** SHA-256 of the token: the secret is shown once and never stored. */
    hash: p.string().unique(),
    account: p.string().nullable(),
    routes: p.json<string[]>().nullable(),
    roles: p.json<string[]>().nullable(),
    createdAt: p.bigint('number'),
    revokedAt: p.bigint('number').nullable(),
  }),
});
export type Token = InferEntity<typeof Token>;

/** One row per configuration change: how every node learns that its snapshot is stale. */
export const Change = defineEntity({
  name: 'Change',
  tableName: 'changes',
  properties: (p) => ({
    id: p.integer().primary().autoincrement(),
    kind: p.string(),
    at: p.bigint('number'),
  }),
});
export type Change = InferEntity<typeof Change>;

export const ENTITIES = [Account, Session, Token, Change];
