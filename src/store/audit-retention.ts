/**
 * How long the audit trail keeps its events (spec 1.3 rule 15, section 8): the retention of
 * changes (which the security half shares) among five choices, a year by default; that of
 * operation events from seven days to a year, a month by default. Durations are ISO 8601 with one
 * unit (P7D, P2W, P3M, P1Y) and are taken off the calendar in UTC, so "three months" is three
 * months, not 90 days. Pure: the API validates with it, the store and the sweep draw lines with it.
 */

/** Per part, events strictly older than this epoch ms go. */
export interface SweepLines {
  readonly changesBefore: number;
  readonly securityBefore: number;
  readonly operationsBefore: number;
}

export const AUDIT_RETENTIONS = ['P3M', 'P6M', 'P1Y', 'P2Y', 'P5Y'] as const;
export type AuditRetention = (typeof AUDIT_RETENTIONS)[number];
export const DEFAULT_AUDIT_RETENTION: AuditRetention = 'P1Y';
export const DEFAULT_OPERATION_RETENTION = 'P1M';


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

