/**
 * The query of `GET /api/audit` (CONTRACT.md "Audit", spec 1.3 rule 14) read into a typed filter.
 * Every filter holds together (AND); each parameter comes at most once; an unknown parameter or
 * a value the filter does not take is a 400 `filter.invalid` naming it (a typo is not "no
 * filter"); `limit` and `cursor` are refused as the other paged lists refuse them.
 *
 * - `part`: `changes`, `security` or `operations`, or several joined by commas.
 * - `kind`: an action (`signin.refused`) or an action's family (`signin` takes `signin`,
 *   `signin.refused`, `signin.locked`, …). Lower-case letters, digits and `-` between dots: no `_` or `%`,
 *   so the family reads safely as `action = ? OR action LIKE '<kind>.%'`.
 * - `targetKind`: target kinds to keep, joined by commas; `notTarget`: target kinds to leave out
 *   (`notTarget=console` hides console sign-ins). A kind in both is refused.
 * - `actor`: the acting account's name, with or without a token.
 * - `target`: a target's id or name, exactly.
 * - `organisation`: the organisation's id the event belongs to, exactly (the console's switch);
 *   it narrows what the caller may read, never widens it.
 * - `from` (inclusive), `to` (exclusive): epoch seconds or RFC 3339 with an offset; a fraction of
 *   a second is dropped. `from` must come before `to`.
 * - `q`: free text searched, without regard to case, in the detail (a refusal's reason, a note)
 *   and the address.
 * - `limit`: 1 to 500, default 100; `cursor`: from the previous page's `next`.
 * Pages run newest first: the cursor is the last event's id, and the next page starts below it.
 */
import { GatewayError } from '../../http/errors.ts';
import { cursorCodec, readPageQuery } from '../../http/cursor.ts';
import { AUDIT_PARTS, TARGET_KINDS, type AuditEvent, type AuditPart, type TargetKind } from './event.ts';

export const AUDIT_CURSOR = cursorCodec('audit', ['string']);
export const AUDIT_LIMITS = { max: 500, fallback: 100 } as const;
const FILTERS = ['part', 'kind', 'notTarget', 'actor', 'target', 'targetKind', 'organisation', 'from', 'to', 'q'] as const;
const PAGING = ['limit', 'cursor'] as const;
const MAX_TEXT = 200;
const ACTION = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/;

export interface AuditFilter {
  readonly parts: readonly AuditPart[] | null;
  /** An action, or an action's family. */
  readonly kind: string | null;
  readonly targetKinds: readonly TargetKind[] | null;
  readonly notTargetKinds: readonly TargetKind[];
  readonly actor: string | null;
  readonly target: string | null;
  readonly organisation: string | null;
  /** Epoch seconds, inclusive. */
  readonly from: number | null;
  /** Epoch seconds, exclusive. */
  readonly to: number | null;
  readonly q: string | null;
  readonly limit: number;
  /** The page holds events whose id is below this one; null for the first page. */
  readonly before: string | null;
}

const refuse = (field: string, sentence: string): never => {
  throw new GatewayError('filter.invalid', sentence, field);
};

/** A comma-joined list whose every entry is one of `allowed`, each once. */
function listOf<T extends string>(field: string, raw: string, allowed: readonly T[]): T[] {
  const out: T[] = [];
  for (const entry of raw.split(',')) {
    if (!(allowed as readonly string[]).includes(entry)) refuse(field, `${field} takes ${allowed.join(', ')}, joined by commas; "${entry}" is none of them.`);
    if (!out.includes(entry as T)) out.push(entry as T);
  }
  return out;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Epoch seconds from `1764000000` or `2026-11-24T16:00:00+01:00`; undefined for anything else. */
export function readMoment(raw: string): number | undefined {
  if (/^\d{1,11}$/.test(raw)) return Number(raw);
  const m = RFC3339.exec(raw);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const local = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(local);
  // Date.UTC rolls 2026-02-30 over to March: a date that does not round-trip does not exist.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d
    || back.getUTCHours() !== h || back.getUTCMinutes() !== mi || back.getUTCSeconds() !== s) return undefined;
  let offset = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  return Math.floor((local - offset) / 1000);
}

function text(field: string, raw: string): string {
  if (raw.trim() === '' || raw.length > MAX_TEXT) refuse(field, `${field} is 1 to ${MAX_TEXT} characters.`);
  return raw;
}

/** Reads the query string of the audit list, or refuses it naming the parameter at fault. */
export function parseAuditQuery(query: URLSearchParams): AuditFilter {
  const seen: string[] = [];
  for (const [name] of query) {
    if (!(FILTERS as readonly string[]).includes(name) && !(PAGING as readonly string[]).includes(name)) {
      const shown = name.slice(0, 50);
      refuse(shown, `"${shown}" is not a filter of the audit trail; the filters are ${FILTERS.join(', ')}, with limit and cursor.`);
    }
    if (seen.includes(name) && (FILTERS as readonly string[]).includes(name)) refuse(name, `${name} is given once.`);
    seen.push(name);
  }
  // Every name is one of ours now, so reading by name touches nothing inherited.
  const get = (name: (typeof FILTERS)[number]): string | null => {
    const v = query.get(name);
    if (v === '') refuse(name, `${name} is given with no value; leave it out for no filter.`);
    return v;
  };
  const part = get('part');
  const kind = get('kind');
  if (kind !== null && (kind.length > 100 || !ACTION.test(kind))) {
    refuse('kind', 'kind is an action or its family: words of lower-case letters, digits and "-" joined by dots, as in signin.refused.');
  }
  const targetKind = get('targetKind');
  const notTarget = get('notTarget');
  const targetKinds = targetKind === null ? null : listOf('targetKind', targetKind, TARGET_KINDS);
  const notTargetKinds = notTarget === null ? [] : listOf('notTarget', notTarget, TARGET_KINDS);
  const both = notTargetKinds.find((k) => targetKinds?.includes(k));
  if (both !== undefined) refuse('notTarget', `The target kind ${both} is both kept (targetKind) and left out (notTarget).`);
  const moment = (name: 'from' | 'to'): number | null => {
    const raw = get(name);
    if (raw === null) return null;
    return readMoment(raw) ?? refuse(name, `${name} is epoch seconds or an RFC 3339 moment with an offset, as in 2026-11-24T16:00:00Z.`);
  };
  const from = moment('from');
  const to = moment('to');
  if (from !== null && to !== null && from >= to) refuse('to', 'to must come after from (from is kept, to is not).');
  const actor = get('actor');
  const target = get('target');
  const organisation = get('organisation');
  const q = get('q');
  const page = readPageQuery(query, AUDIT_CURSOR, AUDIT_LIMITS);
  return {
    parts: part === null ? null : listOf('part', part, AUDIT_PARTS),
    kind,
    targetKinds,
    notTargetKinds,
    actor: actor === null ? null : text('actor', actor),
    target: target === null ? null : text('target', target),
    organisation: organisation === null ? null : text('organisation', organisation),
    from,
    to,
    q: q === null ? null : text('q', q),
    limit: page.limit,
    before: page.after === null ? null : page.after[0],
  };
}

/** The `next` of a page whose last (oldest) event has this id. */
export function nextCursor(lastId: string): string {
  return AUDIT_CURSOR.encode([lastId]);
}

/** Whether one event passes the filter (paging's `before` included): the test the SQL applies. */
export function matches(event: AuditEvent, f: AuditFilter): boolean {
  if (f.parts !== null && !f.parts.includes(event.part)) return false;
  if (f.kind !== null && event.action !== f.kind && !event.action.startsWith(`${f.kind}.`)) return false;
  if (f.targetKinds !== null && !f.targetKinds.includes(event.target.kind)) return false;
  if (f.notTargetKinds.includes(event.target.kind)) return false;
  if (f.actor !== null && event.actor?.account !== f.actor) return false;
  if (f.target !== null && event.target.id !== f.target && event.target.name !== f.target) return false;
  if (f.organisation !== null && event.organisation !== f.organisation && event.organisationFrom !== f.organisation) return false;
  if (f.from !== null && event.when < f.from) return false;
  if (f.to !== null && event.when >= f.to) return false;
  if (f.q !== null) {
    const needle = f.q.toLowerCase();
    if (![event.detail, event.address].some((v) => v !== undefined && v.toLowerCase().includes(needle))) return false;
  }
  if (f.before !== null && event.id >= f.before) return false;
  return true;
}
