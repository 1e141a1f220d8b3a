/**
 * ConfigActor's protocol. The actor owns the configuration tables (accounts, sessions, tokens;
 * routes and roles later) and pushes snapshots, so the main thread answers requests from memory
 * and never waits on the database in the request path.
 */
import type { StoreOptions } from '../../store/orm.ts';
import type { TokenRequest, MintedToken } from '../../core/tokens/mint.ts';

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
  readonly expiresAt: number;
}

export interface TokenView {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly hash: string;
  readonly account: string | null;
  readonly routes: readonly string[] | null;
  readonly roles: readonly string[] | null;
}

export interface Snapshot {
  /** Highest change row folded in. */
  readonly version: number;
  readonly accounts: readonly AccountView[];
  readonly sessions: readonly SessionView[];
  readonly tokens: readonly TokenView[];
}

export type ConfigEvent =
  | { readonly type: 'snapshot'; readonly snapshot: Snapshot }
  | { readonly type: 'session.added'; readonly session: SessionView }
  | { readonly type: 'session.removed'; readonly id: string };

export type ConfigCalls = {
  ping: { args: null; result: { driver: 'sqlite' | 'postgresql' } };
  'session.create': { args: { account: string; ttlMs: number }; result: { secret: string; expiresAt: number } };
  'session.delete': { args: { id: string }; result: null };
  'token.create': { args: TokenRequest; result: MintedToken };
};

export interface ConfigInit {
  readonly store: StoreOptions;
  /** How often to look for changes written by other processes (other nodes, the CLI). */
  readonly pollMs: number;
}
