import type { LogLevel } from '../settings/settings.ts';
import type { Attributes, LogRecord } from './record.ts';

export type { Attributes, LogRecord };

export type LogSink = (record: LogRecord) => void;

export const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, attrs?: Attributes): void;
  info(msg: string, attrs?: Attributes): void;
  warn(msg: string, attrs?: Attributes): void;
  error(msg: string, attrs?: Attributes): void;
  /** A logger that adds `attrs` to every record (for example `{ actor: 'config' }`). */
  child(attrs: Attributes): Logger;
  /** Writes an already-built record (records coming from worker threads). */
  write(record: LogRecord): void;
  /** The level records are kept at now. */
  level(): LogLevel;
  /** Told each time the level moves (worker threads follow it); returns the unsubscribe. */
  onLevel(fn: (level: LogLevel) => void): () => void;
}

/** Shared state of a logger tree: the level can move at run time, sinks can be added. */
export class LogHub {
  private rank: number;
  private current: LogLevel;
  private readonly sinks: LogSink[] = [];
  private readonly watchers = new Set<(level: LogLevel) => void>();

  constructor(level: LogLevel) {
    this.rank = RANK[level];
    this.current = level;
  }

  get level(): LogLevel {
    return this.current;
  }

  setLevel(level: LogLevel): void {
    if (level === this.current) return;
    this.rank = RANK[level];
    this.current = level;
    for (const fn of this.watchers) {
      try {
        fn(level);
      } catch {
        // A watcher's failure is its own.
      }
    }
  }

  onLevel(fn: (level: LogLevel) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.rank;
  }

  addSink(sink: LogSink): () => void {
    this.sinks.push(sink);
    return () => {
      const i = this.sinks.indexOf(sink);
      if (i >= 0) this.sinks.splice(i, 1);
    };
  }

  emit(record: LogRecord): void {
    if (!this.enabled(record.level)) return;
    for (const sink of this.sinks) {
      try {
        sink(record);
      } catch {
        // A broken sink must not take the gateway down with it.
      }
    }
  }

  logger(attrs: Attributes = {}): Logger {
    const hub = this;
    const make = (base: Attributes): Logger => {
      const at = (level: LogLevel) => (msg: string, extra?: Attributes) => {
        if (!hub.enabled(level)) return;
        hub.emit({ time: new Date().toISOString(), type: 'app', level, msg, attrs: extra ? { ...base, ...extra } : base });
      };
      return {
        debug: at('debug'),
        info: at('info'),
        warn: at('warn'),
        error: at('error'),
        child: (more) => make({ ...base, ...more }),
        write: (record) => hub.emit({ ...record, attrs: { ...base, ...record.attrs } }),
        level: () => hub.level,
        onLevel: (fn) => hub.onLevel(fn),
      };
    };
    return make(attrs);
  }
}

/** Serialises an unknown thrown value into log attributes. */
export function errorAttrs(err: unknown): Attributes {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { error: err.message, ...(code !== undefined ? { code } : {}) };
  }
  return { error: String(err) };
}
