import type { LogFormat, LogLevel } from '../settings/settings.ts';

export type Attributes = Readonly<Record<string, unknown>>;

/** One operational log record: the typed object every sink receives (spec 1.4 rule 1). */
export interface LogRecord {
  readonly time: string;
  readonly type: 'app';
  readonly level: LogLevel;
  readonly msg: string;
  readonly attrs: Attributes;
}

export type LogSink = (record: LogRecord) => void;

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, attrs?: Attributes): void;
  info(msg: string, attrs?: Attributes): void;
  warn(msg: string, attrs?: Attributes): void;
  error(msg: string, attrs?: Attributes): void;
  /** A logger that adds `attrs` to every record (for example `{ actor: 'config' }`). */
  child(attrs: Attributes): Logger;
  /** Writes an already-built record (records coming from worker threads). */
  write(record: LogRecord): void;
}

/** Shared state of a logger tree: the level can move at run time, sinks can be added. */
export class LogHub {
  private rank: number;
  private readonly sinks: LogSink[] = [];

  constructor(level: LogLevel) {
    this.rank = RANK[level];
  }

  setLevel(level: LogLevel): void {
    this.rank = RANK[level];
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
      };
    };
    return make(attrs);
  }
}

function textValue(value: unknown): string {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s !== undefined && /[\s"=]/.test(s) ? JSON.stringify(s) : String(s);
}

/** Formats a record as one line in the startup format (GATEWAY_LOG_FORMAT). */
export function formatRecord(record: LogRecord, format: LogFormat): string {
  if (format === 'json') {
    return JSON.stringify({ time: record.time, type: record.type, level: record.level, msg: record.msg, ...record.attrs });
  }
  let line = `${record.time} ${record.level.toUpperCase().padEnd(5)} ${record.msg}`;
  for (const [k, v] of Object.entries(record.attrs)) {
    if (v !== undefined) line += ` ${k}=${textValue(v)}`;
  }
  return line;
}

/** The operational log goes to standard error (spec 1.4 rule 1). */
export function stderrSink(format: LogFormat): LogSink {
  return (record) => {
    process.stderr.write(formatRecord(record, format) + '\n');
  };
}

/** Serialises an unknown thrown value into log attributes. */
export function errorAttrs(err: unknown): Attributes {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { error: err.message, ...(code !== undefined ? { code } : {}) };
  }
  return { error: String(err) };
}
