/**
 * The operational log as the Logs screen holds it (CONTRACT.md "Logs", docs/live.md "Logs live
 * feed"): the lines, the level every node follows with its countdown, the output settings.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LogLine {
  /** ISO 8601, the gateway's clock. */
  readonly time: string;
  readonly level: LogLevel;
  readonly message: string;
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly node: string;
}

/** A line as the screen keeps it: a key of its own, since the wire record has none. */
export interface HeldLine {
  readonly key: number;
  readonly line: LogLine;
  /** Lower-case text the search looks in, made once. */
  readonly text: string;
}

export interface LevelState {
  readonly level: LogLevel;
  readonly startupLevel: LogLevel;
  /** Epoch seconds on the gateway's clock, or null when the level stays. */
  readonly revertsAt: number | null;
}

export type LogMode = 'startup' | 'agent' | 'otlp';

export interface LogSettings extends LevelState {
  readonly accessLog: boolean;
  readonly mode: LogMode;
  /** The mode this node writes in: startup where a push was set but this node cannot make it. */
  readonly nodeMode: LogMode;
  /** Collector batches dropped after three refusals since this node started. */
  readonly dropped: number;
  readonly droppedRecords: { readonly app: number; readonly access: number };
  readonly node: string;
}

export type FeedMessage =
  | ({ type: 'hello'; node: string; at: number; lines: LogLine[] } & LevelState)
  | { type: 'line'; line: LogLine }
  | ({ type: 'level' } & LevelState);

/** Each node keeps 5,000 lines: the screen keeps as many. */
export const HELD_LINES = 5_000;

/** The text the gateway's own search looks in (src/log/console-buffer.ts): message, then key=value. */
export function textOf(line: LogLine): string {
  let text = line.message;
  for (const [k, v] of Object.entries(line.attrs)) text += ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
  return text.toLowerCase();
}

export interface LineFilter {
  /** The lowest level shown, or '' for every level. */
  readonly level: LogLevel | '';
  readonly q: string;
}

export function shows(held: HeldLine, f: LineFilter): boolean {
  if (f.level !== '' && RANK[held.line.level] < RANK[f.level]) return false;
  const needle = f.q.trim().toLowerCase();
  return needle === '' || held.text.includes(needle);
}

/** The lines as JSON Lines, one record a line as the API writes them, oldest first. */
export function jsonLines(lines: readonly HeldLine[]): string {
  return lines.map((h) => JSON.stringify({ time: h.line.time, level: h.line.level, message: h.line.message, attrs: h.line.attrs, node: h.line.node }) + '\n').join('');
}

/** A line's time in the operator's zone, to the millisecond. */
export function lineTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3,
  });
}
