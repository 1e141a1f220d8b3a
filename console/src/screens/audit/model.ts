/**
 * The audit trail as the console reads it (CONTRACT.md "Audit", docs/audit.md): the event the API
 * answers, the screen's filters and the query they make. The API decides what a caller may read;
 * the screen only narrows within that.
 */
import { query } from '../../api.ts';

// The event's shape is the gateway's own (a module without imports): the screen reads what the API writes.
import type { AuditEvent } from '../../../../src/core/audit/event.ts';
export type { AuditChange, AuditEvent } from '../../../../src/core/audit/event.ts';

export interface AuditPage {
  readonly events: AuditEvent[];
  readonly next: string | null;
}

/** The parts of spec 1.3 rule 14: everything, the changes half, the console's sign-ins. */
export type PartChoice = 'all' | 'changes' | 'signins';

export const PART_LABELS: Record<PartChoice, string> = { all: 'All', changes: 'Changes', signins: 'Console sign-ins' };

/** docs/audit.md "Target kinds", in the order an operator looks for them. */
export const TARGET_KINDS = [
  'route', 'account', 'role', 'organisation', 'token', 'vault', 'settings', 'schedule', 'certificate',
  'trusted-authority', 'identity-provider', 'theme', 'language', 'issue-report', 'gateway', 'console', 'audit', 'operation',
] as const;

export interface AuditFilters {
  readonly part: PartChoice;
  /** `datetime-local` values, read in the operator's zone; empty for no bound. */
  readonly from: string;
  readonly to: string;
  readonly q: string;
  readonly targetKind: string;
}

export const NO_FILTERS: AuditFilters = { part: 'all', from: '', to: '', q: '', targetKind: '' };

/** Events asked for per page: a screenful, then More. */
export const PAGE_SIZE = 50;

/** A `datetime-local` value (the browser's zone) as epoch seconds; null when empty or unreadable. */
export function epochOf(local: string): number | null {
  if (local === '') return null;
  const ms = new Date(local).getTime();
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/** The filters as the list and the export take them (the export refuses limit and cursor). */
export function filterQuery(f: AuditFilters, extra: Record<string, string | number | null> = {}): string {
  return query({
    part: f.part === 'changes' ? 'changes' : f.part === 'signins' ? 'security' : null,
    // A console sign-in is a security line whose target is the console (docs/audit.md, Target kinds).
    targetKind: f.part === 'signins' ? 'console' : f.targetKind,
    from: epochOf(f.from),
    to: epochOf(f.to),
    q: f.q.trim(),
    ...extra,
  });
}

/** spec 1.3 rule 5: `<account>, via <token name>` when a token acted; empty when nobody is known. */
export function actorText(actor: AuditEvent['actor']): string {
  if (!actor) return '';
  return actor.token ? `${actor.account}, via ${actor.token}` : actor.account;
}

/** A changed value as the trail holds it: strings as they are, the rest as JSON; null is "not set". */
export function valueText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}
