/**
 * The changes half of the trail as the actors write it (spec 1.3 rules 3-5): a handler
 * notes what it changed (before and after, as plain objects), and `write()` turns the notes into
 * lines inside the change's own transaction, stamped with the caller the call carried. So the
 * stamp is taken in one place, a change and its line commit or roll back together, and an update
 * whose diff is empty writes nothing.
 */
import { diff } from './diff.ts';
import type { AuditPart, TargetKind } from './event.ts';
import { clip } from './event.ts';
import type { NewAuditRow } from '../../store/audit.ts';

type Plain = Readonly<Record<string, unknown>>;

/** Who acted, as the write call carried it (the workers' `Caller` has this shape). */
export interface Stamp {
  readonly account: string | null;
  readonly token: string | null;
  readonly address: string | null;
  readonly traceId: string | null;
}

export interface ChangeNote {
  /** `route.update`, `token.revoke`, …; `<kind>.create|update|delete` when left out. */
  readonly action?: string;
  readonly target: { readonly kind: TargetKind; readonly id?: string; readonly name?: string };
  /** The organisation the changed object belongs to, when it does. */
  readonly organisation?: string | null;
  /** null for a creation; left out for an act with no object (the detail says what). */
  readonly before?: object | null;
  /** null for a deletion. */
  readonly after?: object | null;
  readonly detail?: string;
  /** Display-only fields of this object. */
  readonly skip?: readonly string[];
  /** `changes` unless the act belongs to an account's security (a personal token). */
  readonly part?: AuditPart;
}

/** What a handler holds to note its changes; `write()` reads them once the handler returns. */
export class AuditNotes {
  readonly notes: ChangeNote[] = [];
  note(n: ChangeNote): void {
    this.notes.push(n);
  }
}

function verb(n: ChangeNote): string {
  if (n.before === null) return 'create';
  if (n.after === null) return 'delete';
  return 'update';
}

/** The lines for the notes: masked diffs, the caller's stamp; nothing for an empty update. */
export function linesOf(notes: readonly ChangeNote[], caller: Stamp | null, now: number, node: string): NewAuditRow[] {
  const rows: NewAuditRow[] = [];
  for (const n of notes) {
    const hasObject = n.before !== undefined || n.after !== undefined;
    const changes = hasObject ? diff((n.before ?? null) as Plain | null, (n.after ?? null) as Plain | null, { skip: n.skip ?? [] }) : [];
    const action = n.action ?? `${n.target.kind}.${verb(n)}`;
    // An update that moved nothing is no event (rule 3); a creation or deletion always is.
    if (hasObject && n.before && n.after && changes.length === 0 && n.detail === undefined) continue;
    const detail = n.detail ?? (n.before === null ? 'created' : n.after === null ? 'deleted' : null);
    // An object moved out of an organisation: the line is that organisation's too.
    const left = organisationOf(n.before);
    const organisation = n.organisation ?? null;
    rows.push({
      at: now,
      part: n.part ?? 'changes',
      action,
      actorAccount: caller?.account ?? null,
      actorToken: caller?.token ?? null,
      targetKind: n.target.kind,
      targetId: n.target.id ?? null,
      targetName: n.target.name === undefined ? null : clip(n.target.name),
      organisation,
      organisationFrom: left !== null && left !== organisation ? left : null,
      changes: changes.length > 0 ? changes : null,
      detail,
      address: caller?.address ?? null,
      node,
      traceId: caller?.traceId ?? null,
      attributes: null,
    });
  }
  return rows;
}

/** The `organisation` an object's record carries (routes, accounts), or null. */
function organisationOf(record: object | null | undefined): string | null {
  const value = (record as { organisation?: unknown } | null | undefined)?.organisation;
  return typeof value === 'string' ? value : null;
}
