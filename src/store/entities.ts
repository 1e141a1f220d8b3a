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
    /** `console` (control plane) or `app` (data plane): a cookie opens only its own plane. */
    scope: p.string().default('console'),
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

export const Route = defineEntity({
  name: 'Route',
  tableName: 'routes',
  properties: (p) => ({
    id: p.string().primary(),
    upstream: p.string(),
    paths: p.json<string[]>(),
    hosts: p.json<string[]>(),
    stripPrefix: p.boolean(),
    rule: p.json<{ roles: string[] }>().nullable(),
    endpointRules: p.json<Array<{ method: string; path: string; roles: string[] }>>(),
    identity: p.string(),
    timeoutMs: p.integer(),
    /** The deposited OpenAPI contract, kept as written. */
    openapi: p.json<unknown>().nullable(),
    organisation: p.string().nullable(),
    createdAt: p.bigint('number'),
    updatedAt: p.bigint('number'),
  }),
});
export type Route = InferEntity<typeof Route>;

export const Role = defineEntity({
  name: 'Role',
  tableName: 'roles',
  properties: (p) => ({
    name: p.string().primary(),
    implies: p.json<string[]>(),
    createdAt: p.bigint('number'),
    updatedAt: p.bigint('number'),
  }),
});
export type Role = InferEntity<typeof Role>;

export const Organisation = defineEntity({
  name: 'Organisation',
  tableName: 'organisations',
  properties: (p) => ({
    id: p.string().primary(),
    name: p.string(),
    hours: p.json<{ timezone: string; windows: Array<{ days: string[]; from: string; to: string }> }>().nullable(),
    createdAt: p.bigint('number'),
    updatedAt: p.bigint('number'),
  }),
});
export type Organisation = InferEntity<typeof Organisation>;

/** A sealed secret: AES-256-GCM under the master key; the plain value is never stored. */
export const VaultEntry = defineEntity({
  name: 'VaultEntry',
  tableName: 'vault_entries',
  properties: (p) => ({
    /** `<scope>/<name>`: scope is `app` or `org:<organisation id>`. */
    id: p.string().primary(),
    scope: p.string().index(),
    name: p.string(),
    sealed: p.text(),
    createdAt: p.bigint('number'),
    updatedAt: p.bigint('number'),
  }),
});
export type VaultEntry = InferEntity<typeof VaultEntry>;

/** The ES256 keys that sign identity JWTs, sealed like vault values; shared by every node. */
export const SigningKeyRow = defineEntity({
  name: 'SigningKeyRow',
  tableName: 'signing_keys',
  properties: (p) => ({
    kid: p.string().primary(),
    sealed: p.text(),
    createdAt: p.bigint('number'),
  }),
});
export type SigningKeyRow = InferEntity<typeof SigningKeyRow>;

export const ENTITIES = [Account, Session, Token, Change, Route, Role, Organisation, VaultEntry, SigningKeyRow];
