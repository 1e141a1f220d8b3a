/**
 * How long the audit trail keeps its events (spec 1.3 rule 15, section 8), kept in the
 * `settings` table: the retention of changes (which the security half shares) among five
 * choices, a year by default; that of operation events from seven days to a year, a month by
 * default; and when the last sweep ran, in a row of its own so that a sweep never writes over
 * who set the retention. Durations are ISO 8601 with one unit (P7D, P2W, P3M, P1Y) and are
 * taken off the calendar in UTC, so "three months" is three months, not 90 days.
 */
import type { Store } from './orm.ts';
import { SettingRow } from './entities.ts';
import type { SweepCounts, SweepLines } from './audit.ts';

export const AUDIT_RETENTIONS = ['P3M', 'P6M', 'P1Y', 'P2Y', 'P5Y'] as const;
export type AuditRetention = (typeof AUDIT_RETENTIONS)[number];
export const DEFAULT_AUDIT_RETENTION: AuditRetention = 'P1Y';
export const DEFAULT_OPERATION_RETENTION = 'P1M';

export const AUDIT_RETENTION_KEY = 'audit.retention';
export const AUDIT_LAST_SWEEP_KEY = 'audit.lastSweep';

export interface AuditRetentionSettings {
  readonly retention: AuditRetention;
  readonly operationRetention: string;
}

/** The collector push's two switches (spec 1.3 rule 11), off by default. */
export interface AuditPushSwitches {
  /** The data plane's lines: sign-ins, refusals, password and factor changes, audited operations. */
  readonly audit: boolean;
  /** The console's lines too: changes and console sign-ins. */
  readonly console: boolean;
}

/** What root sets. */
export interface AuditChoice extends AuditRetentionSettings {
  readonly push: AuditPushSwitches;
}

export interface LastSweep {
  readonly at: number;
  readonly deleted: SweepCounts;
}

export interface AuditSettings extends AuditChoice {
  readonly updatedAt: number | null;
  readonly updatedBy: string | null;
  readonly lastSweep: LastSweep | null;
}

const DAY_MS = 86_400_000;
const DURATION = /^P([1-9][0-9]{0,3})([DWMY])$/;

/** The instant `iso` before `now` (epoch ms), or null when `iso` is not a one-unit duration. */
export function durationBefore(now: number, iso: string): number | null {
  const m = DURATION.exec(iso);
  if (!m) return null;
  const n = Number(m[1]);
  if (m[2] === 'D' || m[2] === 'W') return now - n * (m[2] === 'W' ? 7 : 1) * DAY_MS;
  const d = new Date(now);
  const months = d.getUTCFullYear() * 12 + d.getUTCMonth() - (m[2] === 'M' ? n : 12 * n);
  const year = Math.floor(months / 12);
  const month = months - 12 * year;
  // May 31 less three months is February's last day: a line kept early keeps events, never loses them.
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  d.setUTCFullYear(year, month, Math.min(d.getUTCDate(), last));
  return d.getTime();
}

export const isAuditRetention = (v: unknown): v is AuditRetention => (AUDIT_RETENTIONS as readonly unknown[]).includes(v);

/**
 * From seven days to a year, whatever the day it is measured from: a month is always at least
 * seven days and twelve months never more than a year.
 */
export function isOperationRetention(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const m = DURATION.exec(v);
  if (!m) return false;
  const n = Number(m[1]);
  switch (m[2]) {
    case 'D': return n >= 7 && n <= 365;
    case 'W': return n <= 52;
    case 'M': return n <= 12;
    default: return n === 1;
  }
}

/** Where each part's sweep draws its line at `now`. */
export function sweepLines(now: number, s: AuditRetentionSettings): SweepLines {
  const changes = durationBefore(now, s.retention) ?? durationBefore(now, DEFAULT_AUDIT_RETENTION)!;
  const operations = durationBefore(now, s.operationRetention) ?? durationBefore(now, DEFAULT_OPERATION_RETENTION)!;
  return { changesBefore: changes, securityBefore: changes, operationsBefore: operations };
}

/** The settings as stored; a value missing or no longer valid reads as its default. */
export async function readAuditSettings(store: Store): Promise<AuditSettings> {
  const rows = await store.em().find(SettingRow, { key: { $in: [AUDIT_RETENTION_KEY, AUDIT_LAST_SWEEP_KEY] } });
  const kept = rows.find((r) => r.key === AUDIT_RETENTION_KEY);
  const swept = rows.find((r) => r.key === AUDIT_LAST_SWEEP_KEY);
  const value = (kept?.value ?? {}) as { retention?: unknown; operationRetention?: unknown; push?: { audit?: unknown; console?: unknown } };
  const last = swept?.value as LastSweep | undefined;
  return {
    retention: isAuditRetention(value.retention) ? value.retention : DEFAULT_AUDIT_RETENTION,
    operationRetention: isOperationRetention(value.operationRetention) ? value.operationRetention : DEFAULT_OPERATION_RETENTION,
    push: { audit: value.push?.audit === true, console: value.push?.console === true },
    updatedAt: kept ? kept.updatedAt : null,
    updatedBy: kept?.updatedBy ?? null,
    lastSweep: typeof last?.at === 'number' ? last : null,
  };
}

/** Root's choice; the values are validated before (a wrong one here is a bug, not a refusal). */
export async function writeAuditSettings(store: Store, s: AuditChoice, now: number, by: string): Promise<void> {
  if (!isAuditRetention(s.retention)) throw new Error(`not an audit retention: ${String(s.retention)}`);
  if (!isOperationRetention(s.operationRetention)) throw new Error(`not an operation retention: ${String(s.operationRetention)}`);
  await store.em().upsert(SettingRow, {
    key: AUDIT_RETENTION_KEY,
    value: { retention: s.retention, operationRetention: s.operationRetention, push: { audit: s.push.audit === true, console: s.push.console === true } },
    updatedAt: now, updatedBy: by,
  });
}

export async function writeLastSweep(store: Store, sweep: LastSweep): Promise<void> {
  await store.em().upsert(SettingRow, { key: AUDIT_LAST_SWEEP_KEY, value: { at: sweep.at, deleted: sweep.deleted }, updatedAt: sweep.at, updatedBy: null });
}
