/**
 * Who reads which lines of the trail (spec 1.3 rule 10, 5 rules 7 and 9). The slice is plain
 * lists, so the query applies it in SQL (`part IN … AND target_kind IN … AND organisation IN …`,
 * the grants joined by OR), and `visible` applies the same slice to one event. The console's
 * screen, the export and the agent's read_audit tool all take their slice from `auditSlice`.
 *
 * - root: everything, console sign-ins and the trail's own exports included.
 * - infra-admin: changes to routes, identity providers, certificates (trusted authorities
 *   included), settings, issue reports.
 * - app-admin: changes to accounts, roles, themes, languages, schedules, settings, issue reports;
 *   the security of application accounts; every audited call (rule 12).
 * - org-admin: every line of the organisations it administers (members' sign-ins into them
 *   included), except console sign-ins and exports, which are root's alone.
 * - anybody else, an org-admin administering no organisation included: refused with `capability`,
 *   never served an empty page.
 * A caller holding several capabilities reads the union of their slices.
 */
import { GatewayError } from '../../http/errors.ts';
import { AUDIT_PARTS, TARGET_KINDS, type AuditEvent, type AuditPart, type TargetKind } from './event.ts';

export interface AuditCaller {
  readonly capabilities: readonly string[];
  /** The organisations the caller administers (meaningful with org-admin). */
  readonly organisations: readonly string[];
}

/** Lines whose part, target kind and organisation are all in these lists. */
export interface AuditGrant {
  readonly parts: readonly AuditPart[];
  readonly targetKinds: readonly TargetKind[];
  /** null: any organisation, or none; a list: the line's organisation must be one of them. */
  readonly organisations: readonly string[] | null;
}

export type AuditSlice =
  | { readonly all: true }
  | { readonly all: false; readonly grants: readonly AuditGrant[] };

/** Target kinds only root reads: console sign-ins and the trail's own exports. */
export const ROOT_ONLY_KINDS: readonly TargetKind[] = ['console', 'audit'];

const INFRA_ADMIN: AuditGrant = {
  parts: ['changes'],
  targetKinds: ['route', 'identity-provider', 'certificate', 'trusted-authority', 'settings', 'issue-report'],
  organisations: null,
};

const APP_ADMIN: readonly AuditGrant[] = [
  { parts: ['changes'], targetKinds: ['account', 'role', 'theme', 'language', 'schedule', 'settings', 'issue-report'], organisations: null },
  { parts: ['security'], targetKinds: ['account'], organisations: null },
  { parts: ['operations'], targetKinds: ['operation'], organisations: null },
];

export const REFUSAL = 'Reading the audit trail needs root, infra-admin or app-admin, or the administration of an organisation.';

/** The caller's slice of the trail, or a `capability` refusal. */
export function auditSlice(caller: AuditCaller): AuditSlice {
  const has = (c: string): boolean => caller.capabilities.includes(c);
  if (has('root')) return { all: true };
  const grants: AuditGrant[] = [];
  if (has('infra-admin')) grants.push(INFRA_ADMIN);
  if (has('app-admin')) grants.push(...APP_ADMIN);
  if (has('org-admin') && caller.organisations.length > 0) {
    grants.push({
      parts: [...AUDIT_PARTS],
      targetKinds: TARGET_KINDS.filter((k) => !ROOT_ONLY_KINDS.includes(k)),
      organisations: [...new Set(caller.organisations)],
    });
  }
  if (grants.length === 0) throw new GatewayError('capability', REFUSAL);
  return { all: false, grants };
}

/** Whether one event lies in the slice: the same test the SQL applies. */
export function visible(event: Pick<AuditEvent, 'part' | 'target' | 'organisation' | 'organisationFrom'>, slice: AuditSlice): boolean {
  if (slice.all) return true;
  return slice.grants.some((g) => g.parts.includes(event.part)
    && g.targetKinds.includes(event.target.kind)
    && (g.organisations === null
      || (event.organisation !== undefined && g.organisations.includes(event.organisation))
      || (event.organisationFrom !== undefined && g.organisations.includes(event.organisationFrom))));
}
