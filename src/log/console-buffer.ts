/**
 * The console's view of the operational log (spec 1.4 rule 3): the last 5,000 lines of this node,
 * structured, in a ring; read with a level floor and a text search, and followed live. The
 * access log never enters it. Operational lines are a few thousand a day: a ring on the main
 * thread is cheap, and the live feed reads it where the sockets are.
 */
import type { LogLevel } from '../settings/settings.ts';
import { RANK } from './logger.ts';
import { safeJson } from './format.ts';
import type { LogRecord } from './record.ts';

export const BUFFER_LINES = 5_000;

/** A line as the console reads it (CONTRACT.md, "Logs"). */
export interface ConsoleLine {
  /** Increases by one per line on this node: a live client knows what it has seen. */
  readonly seq: number;
  readonly time: string;
  readonly level: LogLevel;
  readonly message: string;
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly node: string;
}

export interface LineQuery {
  /** Lines at this level or above. */
  readonly level?: LogLevel;
  /** Case-insensitive text looked for in the message and the attributes' names and values. */
  readonly q?: string;
  /** The newest this many of what matches (default and at most BUFFER_LINES). */
  readonly limit?: number;
}

export class ConsoleBuffer {
  readonly #ring: (ConsoleLine | undefined)[];
  #next = 0;
  #seq = 0;
  readonly #followers = new Set<(line: ConsoleLine) => void>();

  constructor(private readonly node: string, private readonly size = BUFFER_LINES) {
    this.#ring = new Array<ConsoleLine | undefined>(size);
  }

  add(record: LogRecord): void {
    // Plain JSON values from here on: the API, the export and the feed send the line as JSON.
    const attrs = JSON.parse(safeJson(record.attrs) ?? '{}') as Record<string, unknown>;
    const line: ConsoleLine = { seq: ++this.#seq, time: record.time, level: record.level, message: record.msg, attrs, node: this.node };
    this.#ring[this.#next] = line;
    this.#next = (this.#next + 1) % this.size;
    for (const fn of this.#followers) {
      try {
        fn(line);
      } catch {
        // A follower's failure is its own (a socket closing).
      }
    }
  }

  /** Oldest first, newest last. */
  lines(query: LineQuery = {}): ConsoleLine[] {
    const floor = query.level === undefined ? 0 : RANK[query.level];
    const needle = query.q?.trim().toLowerCase() ?? '';
    const limit = Math.min(Math.max(query.limit ?? this.size, 0), this.size);
    const out: ConsoleLine[] = [];
    // Newest first, so that the limit keeps the newest; reversed at the end.
    for (let i = 1; i <= this.size && out.length < limit; i++) {
      const line = this.#ring[(this.#next - i + this.size) % this.size];
      if (line === undefined) break;
      if (RANK[line.level] < floor) continue;
      if (needle !== '' && !this.matches(line, needle)) continue;
      out.push(line);
    }
    return out.reverse();
  }

  /** `needle` lower-case: looked for in the message and the attributes' names and values. */
  matches(line: ConsoleLine, needle: string): boolean {
    return textOf(line).includes(needle);
  }

  follow(fn: (line: ConsoleLine) => void): () => void {
    this.#followers.add(fn);
    return () => this.#followers.delete(fn);
  }
}

function textOf(line: ConsoleLine): string {
  let text = line.message;
  for (const [k, v] of Object.entries(line.attrs)) text += ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
  return text.toLowerCase();
}
