import type { LogLevel } from '../settings/settings.ts';

export type Attributes = Readonly<Record<string, unknown>>;

/** One operational log record: the typed object every sink receives (spec 1.4 rule 1). */
export interface LogRecord {
  readonly time: string;
  readonly type: 'app';
  readonly level: LogLevel;
  readonly msg: string;
  readonly attrs: Attributes;
}
