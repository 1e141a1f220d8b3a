/**
 * LogShipper, main-thread side. `app` and `access` are what the hub and the planes call: each
 * appends to the one-way queue and returns at once (no promise, no write); a full queue drops the
 * record and counts it. The shipper is started first and stopped last, so that what the other
 * parts say while they start and stop is written.
 *
 * Access entries for standard output are gathered here for 10 ms, made into their lines in one
 * loop, and written as one chunk into a ring of shared memory the shipper writes out from: lines
 * made in a batch cost less than a line made at each exchange's end, and a chunk in shared memory
 * less than the same text in a message, copied on both sides (bench/observe measured each). A ring
 * without room (standard output stalled) drops the chunk and counts its lines. Records pushed to
 * the collector, and every entry while the mode is unknown or changing, cross as they are.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Logger } from '../../log/logger.ts';
import type { LogRecord } from '../../log/record.ts';
import type { AccessEntry } from '../../log/access.ts';
import type { LogFormat } from '../../settings/settings.ts';
import { accessAgent, accessLines, jsonLine, logResource, type LogResource } from '../../log/format.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { Gatherer } from '../../workers/gather.ts';
import { siblingModule } from '../../workers/spawn.ts';
import { byteRingMemory, ByteRingWriter } from '../../workers/byte-ring.ts';
import type { LogCalls, LogInit, LogMode, LogTells, ShipperState } from './messages.ts';
import { DropCount, reportTrouble } from './drops.ts';

/** Access lines go out every LINES_MS, or at LINES_MAX waiting. */
const LINES_MS = 10;
const LINES_MAX = 2_000;
/**
 * Bytes of access lines waiting at most for standard output, about four seconds of them at full load:
 * a reader that stalls longer costs lines, counted, never the gateway's memory.
 */
const RING_BYTES = 32 * 1024 * 1024;

/** A chunk of access lines, made in the mode in force (startup format or agent objects), joined by newlines. */
interface LineChunk {
  readonly text: string;
  readonly count: number;
}

export interface LogShipperOptions {
  readonly log: Logger;
  readonly clock: Clock;
  readonly format: LogFormat;
  readonly stdoutFd: number;
  readonly stderrFd: number;
  readonly node: string;
  readonly version: string;
  readonly otlpEndpoint: string | null;
}

/** What the shipper state adds on this side: records this thread's queue had to drop. */
export interface LogOutputState extends ShipperState {
  readonly unshipped: { readonly app: number; readonly access: number };
}

export class LogShipperClient {
  readonly host: ActorHost<LogCalls, LogInit, never, LogTells>;
  /** null until the configuration named it: the shipper holds records until then. */
  #mode: LogMode | null = null;
  /** A mode change is on its way to the worker: entries cross as they are until it is done. */
  #switching = false;
  readonly #format: LogFormat;
  readonly #resource: LogResource;
  /** Entries waiting for the next chunk, all of the mode in force (a mode change flushes them first). */
  #entries: AccessEntry[] = [];
  readonly #gather: Gatherer<LineChunk>;
  readonly #ring = byteRingMemory(RING_BYTES);
  readonly #lines = new ByteRingWriter(this.#ring);
  /** Access lines lost on this side: their chunk found the ring full. */
  readonly #linesDropped: DropCount;

  constructor(opts: LogShipperOptions) {
    this.#format = opts.format;
    const trouble = reportTrouble(opts.log, 'standard output');
    this.#linesDropped = new DropCount((event, dropped) => trouble(event, event === 'dropping' ? { ringBytes: RING_BYTES } : { dropped }));
    this.#resource = logResource(opts.version, opts.node);
    this.host = new ActorHost<LogCalls, LogInit, never, LogTells>({
      name: 'logs',
      background: true,
      module: siblingModule(import.meta.url, './actor.ts'),
      // A restarted shipper resumes the mode in force, not the one it started with.
      init: () => ({
        format: opts.format, mode: this.#mode, stdoutFd: opts.stdoutFd, stderrFd: opts.stderrFd,
        node: opts.node, version: opts.version, otlpEndpoint: opts.otlpEndpoint, lines: this.#ring,
      }),
      log: opts.log,
      clock: opts.clock,
      onEvent: () => {},
      // Tens of thousands of access records a second at full load (to the collector): room for a
      // second of them, sent every 10 ms rather than each turn.
      oneWay: { capacity: 50_000, batch: 1_000, flushMs: LINES_MS },
      beforeSend: () => this.#gather.flush(),
    });
    this.#gather = new Gatherer<LineChunk>({
      everyMs: LINES_MS,
      max: LINES_MAX,
      pack: () => {
        const entries = this.#entries;
        this.#entries = [];
        const text = this.#mode === 'agent'
          ? entries.map((e) => jsonLine(accessAgent(e, this.#resource))).join('\n')
          : accessLines(entries, this.#format);
        return { text, count: entries.length };
      },
      tell: (chunk) => {
        if (this.#lines.write(chunk.text)) this.#linesDropped.flowing();
        else this.#linesDropped.add(chunk.count);
      },
    });
  }

  start(): Promise<void> { return this.host.start(); }
  stop(): Promise<void> { return this.host.stop(); }

  /** Up (or starting, its records queued): false once stopped, when the caller writes itself. */
  get running(): boolean {
    const s = this.host.state;
    return s === 'starting' || s === 'ready' || s === 'restarting';
  }

  get mode(): LogMode {
    return this.#mode ?? 'startup';
  }

  app(record: LogRecord): boolean {
    return this.host.tell('log.app', record);
  }

  access(entry: AccessEntry): void {
    const mode = this.#switching ? null : this.#mode;
    if (mode === 'startup' || mode === 'agent') {
      this.#entries.push(entry);
      this.#gather.added();
    } else this.host.tell('log.access', entry);
  }

  async setMode(mode: LogMode): Promise<void> {
    if (mode === this.#mode) return;
    this.#switching = true;
    // Lines made in the mode in force go before the change.
    this.#gather.flush();
    try {
      await this.host.call('output.set', { mode });
      this.#mode = mode;
    } finally {
      this.#switching = false;
    }
  }

  async state(): Promise<LogOutputState> {
    const inside = await this.host.call('state', null);
    return { ...inside, unshipped: { app: this.host.dropped('log.app'), access: this.host.dropped('log.access') + this.#linesDropped.total } };
  }

  /** Waits until what was handed over before is written or pushed once (tests). */
  async settle(): Promise<void> {
    await this.host.call('settle', null);
  }
}
