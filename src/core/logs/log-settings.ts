/**
 * The log settings every node follows (spec 1.4 rules 3-5; CONTRACT.md "Logs"): the access log
 * switch and the output mode, kept; the level as the console set it last, dated (see
 * level-control.ts for why a dated change and not a kept level).
 */
import { invalidField } from '../../http/errors.ts';
import type { LogLevel } from '../../settings/settings.ts';
import type { LevelChange } from '../../log/level-control.ts';

/**
 * Where the logs go (spec 1.4 rule 5), one at a time: `startup` writes GATEWAY_LOG_FORMAT lines,
 * `agent` one OpenTelemetry-shaped object per line, both on standard error (operational) and
 * standard output (access); `otlp` pushes both to the collector (licensed edition).
 */
export type LogMode = 'startup' | 'agent' | 'otlp';
export const LOG_MODES: readonly LogMode[] = ['startup', 'agent', 'otlp'];
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface LogSettings {
  /** Off by default (spec 1.4 rule 4). */
  readonly accessLog: boolean;
  readonly mode: LogMode;
  readonly level: LevelChange | null;
}

export const DEFAULT_LOG_SETTINGS: LogSettings = { accessLog: false, mode: 'startup', level: null };

/** What a PUT may change: any of the three. */
export interface LogSettingsInput {
  readonly accessLog?: boolean;
  readonly mode?: LogMode;
  readonly level?: LogLevel;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads `PUT /api/settings/logs`; a typo in a name or a value is refused with the field, never ignored. */
export function parseLogSettings(body: unknown): LogSettingsInput {
  if (!isObject(body)) throw invalidField('body', 'Send the log settings as a JSON object, such as {"level": "debug", "accessLog": true, "mode": "startup"}.');
  const out: { accessLog?: boolean; mode?: LogMode; level?: LogLevel } = {};
  for (const [key, value] of Object.entries(body)) {
    switch (key) {
      case 'accessLog':
        if (typeof value !== 'boolean') throw invalidField('accessLog', 'accessLog is true (one line per request on standard output) or false.');
        out.accessLog = value;
        break;
      case 'mode':
        if (typeof value !== 'string' || !(LOG_MODES as readonly string[]).includes(value)) {
          throw invalidField('mode', `mode is one of ${LOG_MODES.join(', ')}.`);
        }
        out.mode = value as LogMode;
        break;
      case 'level':
        if (typeof value !== 'string' || !(LOG_LEVELS as readonly string[]).includes(value)) {
          throw invalidField('level', `level is one of ${LOG_LEVELS.join(', ')}.`);
        }
        out.level = value as LogLevel;
        break;
      case 'startupLevel': case 'revertsAt': case 'nodeMode': case 'dropped': case 'droppedRecords': case 'node':
        // Read-only members of the answer: a console sending the whole object back is not refused for them.
        break;
      default:
        throw invalidField(key, `"${key}" is not a log setting; the settings are level, accessLog and mode.`);
    }
  }
  // Nothing to change stores nothing, as the other settings refuse it (no audit line saying nothing).
  if (Object.keys(out).length === 0) throw invalidField('level', 'Give level, accessLog or mode, or several of them.');
  return out;
}

/** The stored row's value, read defensively: what no longer parses falls back to the default. */
export function readLogSettings(value: unknown): LogSettings {
  if (!isObject(value)) return DEFAULT_LOG_SETTINGS;
  const level = isObject(value.level)
    && typeof value.level.level === 'string' && (LOG_LEVELS as readonly string[]).includes(value.level.level)
    && typeof value.level.at === 'number' && typeof value.level.by === 'string'
    ? { level: value.level.level as LogLevel, at: value.level.at, by: value.level.by }
    : null;
  return {
    accessLog: value.accessLog === true,
    mode: typeof value.mode === 'string' && (LOG_MODES as readonly string[]).includes(value.mode) ? value.mode as LogMode : 'startup',
    level,
  };
}
