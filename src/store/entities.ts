/**
 * MikroORM entities, defined without decorators so tsx and tsc read them alike. Times are epoch
 * milliseconds (bigint columns read as numbers): the same on SQLite and PostgreSQL.
 */
import type { InferEntity } from '@mikro-orm/core';
import { orm } from './packages.ts';

const { defineEntity } = orm;

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
    /** A schedules token's organisations (ids or `*`); null: none. */
    organisations: p.json<string[]>().nullable(),
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
    /** Endpoint audit rules (migration 0010); null: none. Kept on every edition, applied on the licensed one. */
    audit: p.json<{
      readonly operations: Readonly<Record<string, {
        readonly on: boolean; readonly description?: string; readonly fields?: Readonly<Record<string, string>>;
        readonly body?: boolean; readonly secretFields?: readonly string[];
      }>>;
    }>().nullable(),
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



/**
 * A schedule (spec 2.1). Header values are kept as written (a vault reference stays a
 * reference); metadata is stored without interpretation. Times are epoch milliseconds.
 */
export const Schedule = defineEntity({
  name: 'Schedule',
  tableName: 'schedules',
  properties: (p) => ({
    id: p.string().primary(),
    name: p.string().nullable(),
    roles: p.json<string[]>(),
    method: p.string(),
    routeId: p.string().index(),
    path: p.text(),
    every: p.string().nullable(),
    cron: p.string().nullable(),
    at: p.string().nullable(),
    timezone: p.string(),
    headers: p.json<Record<string, string>>(),
    /** `{ value }`: a JSON null body and no body stay distinct. */
    body: p.json<{ value: unknown }>().nullable(),
    contentType: p.string().nullable(),
    metadata: p.json<Record<string, string>>(),
    overlap: p.string(),
    catchUpS: p.integer(),
    timeoutMs: p.integer(),
    organisation: p.string().nullable().index(),
    /** The token that wrote it: its perimeter bounds what the schedule may reach. */
    tokenId: p.string().nullable().index(),
    tokenName: p.string().nullable(),
    paused: p.boolean().default(false),
    finished: p.boolean().default(false),
    /** Why it stopped for good (`token-revoked`), or null: a stopped schedule never fires again. */
    stopped: p.string().nullable(),
    nextRunAt: p.bigint('number').nullable().index(),
    inFlight: p.json<Record<string, unknown>>().nullable(),
    lastRun: p.json<Record<string, unknown>>().nullable(),
    deferrals: p.integer().default(0),
    /** A turn owed again (a retry's next attempt, or a deferral), taken before the cadence. */
    pendingTurn: p.json<Record<string, unknown>>().nullable(),
    /** A run now or replay asked and not yet taken by the engine. */
    runRequest: p.json<{ at: number; replayOf: string | null; by: string }>().nullable(),
    /** The lease of the call in flight (inFlight.leaseUntil), indexed: the engine looks for ended ones. */
    leaseUntil: p.bigint('number').nullable().index(),
    /** Which ScheduleActor fires it (actors/schedules/shards.ts); fixed at creation. */
    bucket: p.integer().default(0),
    /** Bumped by every write and claim: the conditional UPDATE that takes a turn compares it. */
    version: p.integer().default(0),
    createdAt: p.bigint('number'),
    updatedAt: p.bigint('number'),
  }),
});
export type Schedule = InferEntity<typeof Schedule>;

/** One turn's outcome (spec 2.2), newest first in answers; deleted with its schedule. */
export const ScheduleRun = defineEntity({
  name: 'ScheduleRun',
  tableName: 'schedule_runs',
  properties: (p) => ({
    id: p.string().primary(),
    scheduleId: p.string().index(),
    runId: p.string(),
    attempt: p.integer(),
    node: p.string().nullable(),
    scheduledFor: p.bigint('number').nullable(),
    startedAt: p.bigint('number').nullable(),
    endedAt: p.bigint('number').index(),
    state: p.string(),
    status: p.integer().nullable(),
    detail: p.text().nullable(),
    cause: p.string().nullable(),
    ofRun: p.string().nullable(),
    attempts: p.json<Array<Record<string, unknown>>>().nullable(),
  }),
});
export type ScheduleRun = InferEntity<typeof ScheduleRun>;
/** A setting root changes at run time (the history retention …), shared by every node. */
export const SettingRow = defineEntity({
  name: 'SettingRow',
  tableName: 'settings',
  properties: (p) => ({
    key: p.string().primary(),
    value: p.json<unknown>(),
    updatedAt: p.bigint('number'),
    updatedBy: p.string().nullable(),
  }),
});
export type SettingRow = InferEntity<typeof SettingRow>;

/**
 * A certificate held once (spec 1.2 rules 1-2, 2.5 storage rules): the certificate in clear, the
 * key sealed with the vault master key (context `certificate/<id>`), never in clear.
 */
export const CertificateRow = defineEntity({
  name: 'CertificateRow',
  tableName: 'certificates',
  properties: (p) => ({
    id: p.string().primary(),
    name: p.string(),
    /** import | file | self-signed | csr | acme */
    source: p.string(),
    names: p.json<string[]>(),
    issuer: p.string().nullable(),
    /** Epoch seconds. */
    notBefore: p.bigint('number').nullable(),
    notAfter: p.bigint('number').nullable(),
    fingerprint: p.string().nullable(),
    certPem: p.text().nullable(),
    keySealed: p.text().nullable(),
    csrPem: p.text().nullable(),
    certPath: p.string().nullable(),
    keyPath: p.string().nullable(),
    authority: p.string().nullable(),
    /** What went wrong with the source last (a file that vanished, an authority's refusal). */
    status: p.string().nullable(),
    detail: p.text().nullable(),
    createdAt: p.bigint('number'),
    updatedAt: p.bigint('number'),
  }),
});
export type CertificateRow = InferEntity<typeof CertificateRow>;

/** A certificate placed on a plane (`console`, `app`, `internal`); placedAt orders the fallback. */
export const PlacementRow = defineEntity({
  name: 'PlacementRow',
  tableName: 'certificate_placements',
  properties: (p) => ({
    certificateId: p.string().primary(),
    plane: p.string().primary(),
    placedAt: p.bigint('number'),
  }),
});
export type PlacementRow = InferEntity<typeof PlacementRow>;

/** The last caller of a console door on a node (spec 1.2 rule 7), pooled over nodes when read. */
export const ConsoleTrafficRow = defineEntity({
  name: 'ConsoleTrafficRow',
  tableName: 'console_traffic',
  properties: (p) => ({
    node: p.string().primary(),
    door: p.string().primary(),
    peer: p.string(),
    lastSeen: p.bigint('number'),
  }),
});
export type ConsoleTrafficRow = InferEntity<typeof ConsoleTrafficRow>;

/**
 * An authority https upstreams are verified against, beside the public ones (spec 1.2 rule 22).
 * Certificates only, so the PEM is kept in clear; the other fields are read from it at creation.
 */
export const TrustedAuthority = defineEntity({
  name: 'TrustedAuthority',
  tableName: 'trusted_authorities',
  properties: (p) => ({
    id: p.string().primary(),
    name: p.string().unique(),
    /** The certificates, each re-encoded alone (core/tls/authorities.ts). */
    pem: p.text(),
    subjects: p.json<string[]>(),
    /** The earliest end of validity among the certificates. */
    notAfter: p.bigint('number'),
    /** SHA-256 of the first certificate. */
    fingerprint: p.string(),
    count: p.integer(),
    createdAt: p.bigint('number'),
  }),
});
export type TrustedAuthority = InferEntity<typeof TrustedAuthority>;

/**
 * An ACME authority: a named ACME account (spec 1.2 rule 19, 2.5). The account key is sealed
 * (context `acme-account/<id>`); the EAB HMAC key is a `$name` vault reference kept as written,
 * or the literal sealed under `acme-hmac/<id>`.
 */
export const AcmeAuthorityRow = defineEntity({
  name: 'AcmeAuthorityRow',
  tableName: 'acme_authorities',
  properties: (p) => ({
    id: p.string().primary(),
    name: p.string().unique(),
    directory: p.string(),
    rootCa: p.text().nullable(),
    email: p.string().nullable(),
    eabKid: p.string().nullable(),
    eabHmac: p.text().nullable(),
    termsAccepted: p.boolean(),
    /** http-01 | tls-alpn-01: tried first when the authority offers it. */
    challenge: p.string(),
    accountKeySealed: p.text().nullable(),
    accountUrl: p.string().nullable(),
    createdAt: p.bigint('number'),
    updatedAt: p.bigint('number'),
  }),
});
export type AcmeAuthorityRow = InferEntity<typeof AcmeAuthorityRow>;


/** One node's latest metrics summary, read by the others (migration 0014; spec 1.5 rule 6). */
export const MetricsNodeRow = defineEntity({
  name: 'MetricsNodeRow',
  tableName: 'metrics_nodes',
  properties: (p) => ({
    node: p.string().primary(),
    updatedAt: p.bigint('number'),
    /** The WireSnapshot as JSON text (core/metrics/wire.ts). */
    snapshot: p.text(),
  }),
});
export type MetricsNodeRow = InferEntity<typeof MetricsNodeRow>;

/** One node's endpoints of one route over the minute (core/metrics/cluster-endpoints.ts; migration 0020). */
export const MetricsEndpointsRow = defineEntity({
  name: 'MetricsEndpointsRow',
  tableName: 'metrics_endpoints',
  properties: (p) => ({
    /** JSON of [node, route]. */
    id: p.string().primary(),
    node: p.string(),
    route: p.string(),
    updatedAt: p.bigint('number'),
    /** WireEndpoint[] as JSON text (core/metrics/wire.ts). */
    endpoints: p.text(),
  }),
});
export type MetricsEndpointsRow = InferEntity<typeof MetricsEndpointsRow>;

/** One endpoint's history point of one node (core/metrics/history.ts; migration 0020). */
export const MetricsHistoryRow = defineEntity({
  name: 'MetricsHistoryRow',
  tableName: 'metrics_history',
  properties: (p) => ({
    id: p.integer().primary().autoincrement(),
    node: p.string(),
    route: p.string(),
    template: p.text(),
    deduced: p.boolean(),
    /** Epoch seconds the minute starts. */
    t: p.bigint('number'),
    requests: p.integer(),
    failed: p.integer(),
    /** ms; null when nothing was answered. */
    p95: p.double().nullable(),
  }),
});
export type MetricsHistoryRow = InferEntity<typeof MetricsHistoryRow>;

/** A sign-in attempt of a name (core/sessions/throttle.ts): in flight, failed, or the lock it tripped. */
export const SigninAttemptRow = defineEntity({
  name: 'SigninAttemptRow',
  tableName: 'signin_attempts',
  properties: (p) => ({
    id: p.string().primary(),
    nameKey: p.string(),
    state: p.string(),
    at: p.bigint('number'),
    until: p.bigint('number').nullable(),
  }),
});
export type SigninAttemptRow = InferEntity<typeof SigninAttemptRow>;

export const ENTITIES = [
  Account, Session, Token, Change, Route, Role, Organisation, VaultEntry, SigningKeyRow, Schedule, ScheduleRun, SettingRow,
  CertificateRow, PlacementRow, ConsoleTrafficRow, TrustedAuthority, AcmeAuthorityRow, MetricsNodeRow, MetricsEndpointsRow, MetricsHistoryRow, SigninAttemptRow,
];
