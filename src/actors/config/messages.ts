/**
 * ConfigActor's protocol. The actor owns the configuration tables (accounts, sessions, tokens,
 * routes, roles, organisations, the vault, the identity signing keys, the trusted authorities)
 * and pushes snapshots, so the main thread answers requests from memory and never waits on the
 * database in the request path. Every write is one transaction with its change row; a refusal
 * leaves nothing behind.
 */
import type { StoreOptions } from '../../store/orm.ts';
import type { LogSettings, LogSettingsInput } from '../../core/logs/log-settings.ts';
import type { TokenRequest, MintedToken } from '../../core/tokens/mint.ts';
import type { OrganisationView, RoleView, RouteView } from '../../core/model.ts';
import type { RouteInput } from '../../core/routes/route-input.ts';
import type { OrganisationInput } from '../../core/organisations/organisation-input.ts';
import type { SigningKey } from '../../pipeline/identity.ts';
import type { Declarative } from '../../core/declarative/document.ts';
import type { AuditRow } from '../../store/audit.ts';
import type { RouteAudit } from '../../core/audit/rules.ts';

export interface AccountView {
  readonly id: string;
  readonly name: string;
  readonly passwordHash: string;
  readonly capabilities: readonly string[];
  readonly roles: readonly string[];
  readonly organisation: string | null;
  readonly disabled: boolean;
}

export interface SessionView {
  /** SHA-256 of the cookie value. */
  readonly id: string;
  readonly account: string;
  readonly scope: SessionScope;
  readonly expiresAt: number;
}

export type SessionScope = 'console' | 'app';

export interface TokenView {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly hash: string;
  readonly account: string | null;
  readonly routes: readonly string[] | null;
  readonly roles: readonly string[] | null;
  readonly organisations: readonly string[] | null;
}

export interface Snapshot {
  /** The change rows folded in (see `changeMark`). */
  readonly mark: string;
  readonly accounts: readonly AccountView[];
  readonly sessions: readonly SessionView[];
  readonly tokens: readonly TokenView[];
  readonly routes: readonly RouteView[];
  readonly roles: readonly RoleView[];
  readonly organisations: readonly OrganisationView[];
  /** Unsealed signing keys, oldest first (the first signs). Empty when none can be unsealed. */
  readonly signingKeys: readonly SigningKey[];
  /** The trusted authorities' PEMs (certificates only), oldest first: https upstreams are verified against them too. */
  readonly trustedAuthorities: readonly string[];
  /** The log settings (access log switch, output mode, the level as the console set it last). */
  readonly logs: LogSettings;
}

/** A route as the API answers it: the view plus what only the control plane needs. */
export interface RouteRecord extends RouteView {
  readonly openapi: unknown;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly account: string | null;
  readonly routes: readonly string[] | null;
  readonly roles: readonly string[] | null;
  readonly organisations: readonly string[] | null;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

export interface VaultRecord {
  readonly name: string;
  /** `app`, or the organisation's id. */
  readonly scope: string;
  /** false: this node cannot open the value: it was sealed under another master key. */
  readonly readable: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A trusted authority as the API answers it (never more than public certificate facts). */
export interface AuthorityRecord {
  readonly id: string;
  readonly name: string;
  readonly subjects: readonly string[];
  /** Epoch seconds: the earliest end of validity among its certificates. */
  readonly notAfter: number;
  /** SHA-256 of the first certificate, hex pairs joined by colons. */
  readonly fingerprint: string;
  readonly count: number;
  readonly createdAt: number;
}

export interface NewAccount {
  readonly name: string;
  readonly passwordHash: string;
  readonly roles: readonly string[];
  readonly capabilities: readonly string[];
  readonly organisation: string | null;
  readonly disabled: boolean;
}

export interface AccountChange {
  readonly passwordHash?: string;
  readonly roles?: readonly string[];
  readonly capabilities?: readonly string[];
  readonly organisation?: string | null;
  readonly disabled?: boolean;
}

export type ConfigEvent =
  | { readonly type: 'snapshot'; readonly snapshot: Snapshot }
  | { readonly type: 'session.added'; readonly session: SessionView }
  | { readonly type: 'session.removed'; readonly id: string }
  /** Audit lines committed with a change: on to the AuditBatcher for the collector push. */
  | { readonly type: 'audit.written'; readonly rows: readonly AuditRow[] };

export type ConfigCalls = {
  /** `newer`: migrations of the database this build does not know (a newer build upgraded it). */
  ping: { args: null; result: { driver: 'sqlite' | 'postgresql'; newer: string[] } };
  'session.create': { args: { account: string; scope: SessionScope; ttlMs: number }; result: { secret: string; expiresAt: number } };
  'session.delete': { args: { id: string }; result: null };
  /** A sign-in attempt of `name` begins (actors/config/signin-attempts.ts): refused for `wait` ms, or its place held. */
  'signin.begin': { args: { name: string }; result: { wait: number } | { attempt: string } };
  /** It ended; true when this failure tripped the lock. */
  'signin.end': { args: { name: string; attempt: string; ok: boolean }; result: boolean };
  'token.create': { args: TokenRequest; result: MintedToken };
  'token.list': { args: null; result: TokenRecord[] };
  'token.revoke': { args: { id: string }; result: boolean };
  'route.put': { args: RouteInput; result: { created: boolean; route: RouteRecord } };
  'route.get': { args: { id: string }; result: RouteRecord | null };
  'route.list': { args: null; result: RouteRecord[] };
  'route.delete': { args: { id: string }; result: boolean };
  /** Endpoint audit rules: `body` is checked against the route's contract in the write; false: no such route. */
  'route.audit.put': { args: { id: string; body: unknown }; result: RouteAudit | false };
  /** The rules as the route editor uploads them (`{operations: {}}` when none); null: no such route. */
  'route.audit.get': { args: { id: string }; result: RouteAudit | null };
  'role.put': { args: { name: string; implies: string[] }; result: { created: boolean } };
  'role.delete': { args: { name: string }; result: boolean };
  'account.create': { args: NewAccount; result: { id: string } };
  /**
   * `byRoot`: the caller holds root, who alone may change or delete an account holding console
   * capabilities; judged again on the row in the write's transaction (a grant on another node may
   * not have reached the caller's view yet).
   */
  'account.update': { args: { id: string; change: AccountChange; byRoot: boolean }; result: boolean };
  'account.delete': { args: { id: string; byRoot: boolean }; result: boolean };
  /** The owner's change (profile): the account's security, not a change of the control plane; other sessions end. */
  'account.password': { args: { id: string; passwordHash: string; keepSession: string | null; target: 'account' | 'console' }; result: boolean };
  'organisation.put': { args: OrganisationInput; result: { created: boolean } };
  'organisation.delete': { args: { id: string }; result: boolean };
  'vault.put': { args: { organisation: string | null; name: string; value: string }; result: { created: boolean } };
  'vault.delete': { args: { organisation: string | null; name: string }; result: boolean };
  'vault.list': { args: { organisation: string | null }; result: VaultRecord[] };
  /** Refused with `tls.key-in-authority`, `tls.certificate-invalid` or `tls.authority-name-taken`. */
  /** The log settings every node follows (the level is dated, see log/level-control.ts). */
  'logs.put': { args: { change: LogSettingsInput; by: string }; result: LogSettings };
  'authority.create': { args: { name: string; pem: string }; result: AuthorityRecord };
  'authority.list': { args: null; result: AuthorityRecord[] };
  'authority.delete': { args: { id: string }; result: boolean };
  /** The declarative file (GATEWAY_CONFIG), applied whole or not at all. */
  'config.apply': { args: Declarative; result: { created: number; updated: number } };
};

export interface ConfigInit {
  readonly store: StoreOptions;
  /** How often to look for changes written by other processes (other nodes, the CLI). */
  readonly pollMs: number;
  /** The vault master key, base64: seals vault values and signing keys. */
  readonly masterKey: string;
  /** This node's name, written on the audit lines of its changes. */
  readonly node: string;
}
