/**
 * The scheduler's settings as stored: one row every node reads, its values checked before
 * (core/schedules/scheduler-settings.ts).
 */
import { SettingRow } from '../../store/entities.ts';
import type { Store } from '../../store/orm.ts';
import { DEFAULT_PER_TOKEN, DEFAULT_RETENTION_MS, RETENTION_KEY } from '../../core/schedules/scheduler-settings.ts';
import type { SchedulesSettingsRecord } from './messages.ts';

/** The settings as the row holds them (`ms` is the retention); the defaults while no row is there. */
export async function readSchedulerSettings(store: Store, em = store.em()): Promise<SchedulesSettingsRecord> {
  const row = await em.findOne(SettingRow, { key: RETENTION_KEY });
  const value = (row?.value ?? {}) as { ms?: unknown; perToken?: unknown };
  return {
    retentionMs: typeof value.ms === 'number' ? value.ms : DEFAULT_RETENTION_MS,
    perToken: typeof value.perToken === 'number' ? value.perToken : DEFAULT_PER_TOKEN,
    updatedAt: row?.updatedAt ?? null,
    updatedBy: row?.updatedBy ?? null,
  };
}

/** Writes what changed; a value left out keeps the stored one. */
export async function writeSchedulerSettings(store: Store, change: { retentionMs?: number; perToken?: number }, now: number, by: string): Promise<void> {
  await store.em().transactional(async (tx) => {
    const was = await readSchedulerSettings(store, tx);
    await tx.upsert(SettingRow, { key: RETENTION_KEY, value: { ms: change.retentionMs ?? was.retentionMs, perToken: change.perToken ?? was.perToken }, updatedAt: now, updatedBy: by });
  });
}
