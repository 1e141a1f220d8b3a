/**
 * The audit event (CONTRACT.md "Audit", spec 1.3 and 2.6): one line of the append-only trail.
 * The recorder hands an `AuditInput`; the store adds the `id` (rising, so newest first is id
 * order and a cursor is an id) and the `node` that wrote it.
 *
 * The console reads the same types (console/src/screens/audit/model.ts): this module imports
 * nothing, so the browser build can take it as it is.
 */

/** The three halves a line belongs to: control-plane changes, accounts' security, audited calls. */
export const AUDIT_PARTS = ['changes', 'security', 'operations'] as const;
export type AuditPart = (typeof AUDIT_PARTS)[number];

/**
 * What a line is about. One kind per thing an operator manages, plus:
 * - `account`: an application account (its changes, and its security: sign-ins, passwords, factors,
 *   personal tokens); `console`: a console sign-in, root's alone to read (spec 1.3 rule 10);
 * - `token`: an access token minted on the console (Infra, Access tokens);
 * - `trusted-authority`: an authority https upstreams are verified against (its name and
 *   fingerprint, never its PEM);
 * - `settings`: any setting, TLS ports and doors and the audit retention included, the target's
 *   name saying which (`tls`, `audit`, `logs`);
 * - `gateway`: acts on the whole gateway (maintenance, backup, restore, import, declarative switch);
 * - `audit`: the trail's own acts (an export), read by root;
 * - `operation`: an audited call of a route's operation, the target's id the route's and its name
 *   `<METHOD> <template>`.
 */
export const TARGET_KINDS = [
  'route', 'role', 'account', 'console', 'token', 'organisation', 'vault', 'settings', 'schedule',
  'certificate', 'identity-provider', 'theme', 'language', 'issue-report', 'gateway', 'audit', 'operation',
  'trusted-authority',
] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

export interface AuditActor {
  /** The account's name. */
  readonly account: string;
  /** The name of the token the account acted through, when it did (spec 1.3 rule 5). */
  readonly token?: string;
}

export interface AuditTarget {
  readonly kind: TargetKind;
  readonly id?: string;
  /** For a refused sign-in under a name matching no account: the typed name, clipped. */
  readonly name?: string;
}

/** One moved field. Values are masked (mask.ts) and may be any JSON value. */
export interface AuditChange {
  readonly field: string;
  readonly from: unknown;
  readonly to: unknown;
}

export interface AuditEvent {
  readonly id: string;
  /** Epoch seconds. */
  readonly when: number;
  readonly part: AuditPart;
  /** `route.update`, `signin.refused`, `settings.update`, … (spec 6.1). */
  readonly action: string;
  /** null when nobody is known: a refused name matching no account, the gateway's own acts. */
  readonly actor: AuditActor | null;
  readonly target: AuditTarget;
  /** The organisation the change or the sign-in belongs to, when there is one. */
  readonly organisation?: string;
  /** The organisation a change took its object out of: the line is that organisation's too. */
  readonly organisationFrom?: string;
  readonly changes?: readonly AuditChange[];
  /** Note of a creation, deletion, act with no diff; reason of a refused sign-in; a summary. */
  readonly detail?: string;
  /** The address the gateway resolved, never a caller-written X-Forwarded-For. */
  readonly address?: string;
  /** The W3C trace id of the call, when the caller sent one (operation events). */
  readonly traceId?: string;
  /** An audited operation's fields (spec 2.6), secrets masked where they were recorded. */
  readonly attributes?: unknown;
  /** The node that wrote the line. */
  readonly node: string;
}

/** What the recorder hands to the trail: the store adds `id` and `node`. */
export type AuditInput = Omit<AuditEvent, 'id' | 'node'>;

/** Longest target name kept. */
export const TARGET_NAME_MAX = 200;
/** A name typed at a sign-in page that matches no account is kept this long: enough to see what was tried. */
export const TYPED_NAME_MAX = 64;

/** A caller-typed text cut to `max` characters (whole code points), with `…` when it was longer. */
export function clip(text: string, max = TARGET_NAME_MAX): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max - 1).join('')}…`;
}

/**
 * The actor as the console and the export show it: `<account>, via <token name>` when a token
 * acted, the account alone otherwise, and an empty text when nobody is known.
 */
export function actorText(actor: AuditActor | null): string {
  if (actor === null) return '';
  return actor.token === undefined ? actor.account : `${actor.account}, via ${actor.token}`;
}
