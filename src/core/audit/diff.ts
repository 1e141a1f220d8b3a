/**
 * The diff of a change (spec 1.3 rules 3, 4 and 6): field by field over the own keys of both
 * objects, generic, so a new field of any resource is audited without code here.
 *
 * - A scalar compares by value; a nested object or list by its whole canonical encoding (keys
 *   sorted), so a change anywhere inside surfaces the whole field, before and after.
 * - An absent field and a null one are the same: "not set".
 * - Creation (before null) lists the fields set, deletion (after null) the fields removed.
 * - An empty answer means the update moved nothing: the recorder writes no line.
 *
 * Skipped fields: `id` (the event's target carries it) and the server's own timestamps
 * (`createdAt`, `updatedAt`, `lastUsedAt`), plus the display-only names the caller lists. A
 * reference to another object (`routeId`, `organisation`, `tokenId`) is content, not an
 * identifier of the changed object: moving a schedule to another route is a change. `revokedAt`
 * is not skipped: a revocation is an act, and skipping it would leave a revoke with an empty diff,
 * which writes nothing.
 *
 * Values are compared as they were and answered masked (mask.ts): a changed password shows
 * `***` → `***` and still counts as a change.
 */
import { mask } from './mask.ts';
import type { AuditChange } from './event.ts';

export const SKIPPED_FIELDS: readonly string[] = ['id', 'createdAt', 'updatedAt', 'lastUsedAt'];
const MAX_DEPTH = 32;

export interface DiffOptions {
  /** Display-only fields of this resource, left out of the diff. */
  readonly skip?: readonly string[];
}

type Plain = Readonly<Record<string, unknown>>;

/**
 * One text per value, the same for equal values whatever their keys' order: JSON with object keys
 * sorted. A cycle or a value past 32 levels encodes as a marker rather than running forever.
 */
export function canonical(value: unknown): string {
  const seen = new Set<object>();
  const enc = (v: unknown, depth: number): string => {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return 'null';
    if (typeof v === 'bigint') return JSON.stringify(v.toString());
    if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'null';
    if (v instanceof Date) return JSON.stringify(Number.isNaN(v.getTime()) ? null : v.toISOString());
    if (seen.has(v)) return '"[cycle]"';
    if (depth >= MAX_DEPTH) return '"[too deep]"';
    seen.add(v);
    try {
      if (Array.isArray(v)) return `[${v.map((item) => enc(item, depth + 1)).join(',')}]`;
      const keys = Object.keys(v).filter((k) => (v as Plain)[k] !== undefined).sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${enc((v as Plain)[k], depth + 1)}`).join(',')}}`;
    } finally {
      seen.delete(v);
    }
  };
  return enc(value, 0);
}

/** The field's value, own keys only: `constructor` or `__proto__` never read what objects inherit. */
function own(obj: Plain | null, key: string): unknown {
  if (obj === null || !Object.hasOwn(obj, key)) return null;
  const v = obj[key];
  return v === undefined ? null : v;
}

/** The fields that moved from `before` to `after`, in the order they first appear. */
export function diff(before: Plain | null, after: Plain | null, opts: DiffOptions = {}): AuditChange[] {
  const skip = new Set([...SKIPPED_FIELDS, ...(opts.skip ?? [])]);
  const fields = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  const changes: AuditChange[] = [];
  for (const field of fields) {
    if (skip.has(field)) continue;
    const from = own(before, field);
    const to = own(after, field);
    if (canonical(from) === canonical(to)) continue;
    // Masked as a one-field object, so the field's own name decides (a `password` is `***`).
    const masked = (v: unknown): unknown => (mask({ [field]: v }) as Plain)[field];
    changes.push({ field, from: masked(from), to: masked(to) });
  }
  return changes;
}
