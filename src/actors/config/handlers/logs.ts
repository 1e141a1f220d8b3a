import { SettingRow } from '../../../store/entities.ts';
import { readLogSettings, type LogSettings } from '../../../core/logs/log-settings.ts';
import type { ConfigCalls } from '../messages.ts';
import { write, type WriteDeps } from '../../write.ts';
import type { ActorHandlers } from '../../../workers/actor-runtime.ts';

export const LOGS_KEY = 'logs';

type LogCalls = Pick<ConfigCalls, 'logs.put'>;

/** What the trail compares: the level as set, not its date. */
function audited(s: LogSettings) {
  return { level: s.level?.level ?? null, accessLog: s.accessLog, mode: s.mode };
}

/**
 * The log settings (spec 1.4 rules 3-5): one row every node reads with the snapshot, so a change
 * reaches every node through the change bus. A level named is dated now, even when it is the
 * same one: setting it again restarts its 30 minutes.
 */
export function logHandlers(deps: WriteDeps): ActorHandlers<LogCalls> {
  return {
    'logs.put': ({ change, by }) => write(deps, 'settings', async (em, audit) => {
      const row = await em.findOne(SettingRow, { key: LOGS_KEY });
      const before = readLogSettings(row?.value);
      const after: LogSettings = {
        accessLog: change.accessLog ?? before.accessLog,
        mode: change.mode ?? before.mode,
        level: change.level !== undefined ? { level: change.level, at: deps.now(), by } : before.level,
      };
      if (row) {
        row.value = after;
        row.updatedAt = deps.now();
        row.updatedBy = by;
      } else {
        em.create(SettingRow, { key: LOGS_KEY, value: after, updatedAt: deps.now(), updatedBy: by });
      }
      audit.note({ action: 'settings.update', target: { kind: 'settings', id: LOGS_KEY, name: 'logs' }, before: audited(before), after: audited(after) });
      return after;
    }),
  };
}
