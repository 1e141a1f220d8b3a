/**
 * LogShipper, main-thread side. `app` and `access` are what the hub and the planes call: each
 * appends to the one-way queue and returns at once (no promise, no formatting, no write); a full
 * queue drops the record and counts it. The shipper is started first and stopped last, so that
 * what the other parts say while they start and stop is written.
 */
import type { Clock } from '../../clock/clock.ts';
import type { Logger } from '../../log/logger.ts';
import type { LogRecord } from '../../log/record.ts';
import type { AccessEntry } from '../../log/access.ts';
import type { LogFormat } from '../../settings/settings.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { LogCalls, LogInit, LogMode, LogTells, ShipperState } from './messages.ts';

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

  constructor(opts: LogShipperOptions) {
    this.host = new ActorHost<LogCalls, LogInit, never, LogTells>({
      name: 'logs',
      module: siblingModule(import.meta.url, './actor.ts'),
      // A restarted shipper resumes the mode in force, not the one it started with.
      init: () => ({
        format: opts.format, mode: this.#mode, stdoutFd: opts.stdoutFd, stderrFd: opts.stderrFd,
        node: opts.node, version: opts.version, otlpEndpoint: opts.otlpEndpoint,
      }),
      log: opts.log,
      clock: opts.clock,
      onEvent: () => {},
      // Tens of thousands of access lines a second at full load: room for a second of them.
      oneWay: { capacity: 50_000, batch: 1_000 },
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

  access(entry: AccessEntry): boolean {
    return this.host.tell('log.access', entry);
  }

  async setMode(mode: LogMode): Promise<void> {
    if (mode === this.#mode) return;
    await this.host.call('output.set', { mode });
    this.#mode = mode;
  }

  async state(): Promise<LogOutputState> {
    const inside = await this.host.call('state', null);
    return { ...inside, unshipped: { app: this.host.dropped('log.app'), access: this.host.dropped('log.access') } };
  }

  /** Waits until what was handed over before is written or pushed once (tests). */
  async settle(): Promise<void> {
    await this.host.call('settle', null);
  }
}
