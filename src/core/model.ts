/**
 * The configuration as the request path sees it: plain, immutable values pushed by the config
 * actor in its snapshot. Nothing here touches the database.
 */
import type { RouteAudit } from './audit/rules.ts';

export type IdentityMode = 'headers' | 'remote-user' | 'jwt';
export const IDENTITY_MODES: readonly IdentityMode[] = ['headers', 'remote-user', 'jwt'];

export interface EndpointRuleView {
  /** Upper-case method, or `*` for any. */
  readonly method: string;
  /** Path template, `/orders/{id}`: `{name}` stands for exactly one non-empty segment. */
  readonly path: string;
  /** The caller needs at least one of these roles (after the hierarchy). */
  readonly roles: readonly string[];
}

export interface RouteView {
  readonly id: string;
  /** `http(s)://host[:port][/base]`, no query, no fragment. */
  readonly upstream: string;
  /** Path prefixes, each starting with `/`; the longest matching prefix wins across routes. */
  readonly paths: readonly string[];
  /** Lower-case host names without port; empty means any host. */
  readonly hosts: readonly string[];
  /** Removes the matched prefix before the path is appended to the upstream's. */
  readonly stripPrefix: boolean;
  /** null: open route. Otherwise the caller must hold at least one of `roles`. */
  readonly rule: { readonly roles: readonly string[] } | null;
  readonly endpointRules: readonly EndpointRuleView[];
  readonly identity: IdentityMode;
  readonly timeoutMs: number;
  /** When set, only members of this organisation pass, within its hours. */
  readonly organisation: string | null;
  /** Endpoint audit (licensed edition): the rules, and the contract's summaries of the operations they name. */
  readonly audit?: RouteAuditView | null;
  /** Declared endpoint templates (deposited OpenAPI document, endpoint rules); empty when none. */
  readonly endpoints?: readonly { readonly method: string; readonly template: string }[];
}

export interface RouteAuditView {
  readonly rules: RouteAudit;
  /** `contractExcerpt` of the route's OpenAPI document: what compiling the rules reads. */
  readonly contract: unknown;
}

export interface RoleView {
  readonly name: string;
  /** Roles this one grants as well (direct children in the hierarchy). */
  readonly implies: readonly string[];
}

export interface HoursWindow {
  /** Days of the week the window opens, `MON`…`SUN`. */
  readonly days: readonly string[];
  /** Wall-clock `HH:MM` in the organisation's zone; `to` is exclusive; `24:00` allowed for `to`. */
  readonly from: string;
  readonly to: string;
}

export interface OrganisationHours {
  /** IANA zone the windows are read in. */
  readonly timezone: string;
  readonly windows: readonly HoursWindow[];
}

export interface OrganisationView {
  readonly id: string;
  readonly name: string;
  /** null: no restriction. */
  readonly hours: OrganisationHours | null;
}

/** Who a request acts as once authenticated (a person, or the scheduler later). */
export interface Identity {
  /** Account name (or the scheduler's fixed identity). */
  readonly user: string;
  /** Roles after the hierarchy is expanded, sorted. */
  readonly roles: readonly string[];
  readonly organisation: string | null;
  /** The account's id (absent for the scheduler's identity). */
  readonly id?: string;
  /** The name of the personal token the caller presented, when it came with one. */
  readonly token?: string;
}
