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
import type { SweepCounts } from './audit.ts';
import {
  DEFAULT_AUDIT_RETENTION, DEFAULT_OPERATION_RETENTION, isAuditRetention, isOperationRetention,
  type AuditChoice, type AuditRetention,
} from './audit-retention.ts';

export {
  AUDIT_RETENTIONS, DEFAULT_AUDIT_RETENTION, DEFAULT_OPERATION_RETENTION, durationBefore, isAuditRetention, isOperationRetention, sweepLines,
  type AuditChoice, type AuditPushSwitches, type AuditRetention, type AuditRetentionSettings,
} from './audit-retention.ts';


export const AUDIT_RETENTION_KEY = 'audit.retention';
export const AUDIT_LAST_SWEEP_KEY = 'audit.lastSweep';

export interface LastSweep {
  readonly at: number;
  readonly deleted: SweepCounts;
}

export interface AuditSettings extends AuditChoice {
  readonly updatedAt: number | null;
  readonly updatedBy: string | null;
  readonly lastSweep: LastSweep | null;
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
