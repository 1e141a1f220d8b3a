/**
 * The logs of one node on the main thread (spec 1.4): the LogShipper that writes and pushes, the
 * console buffer, the level control, and the settings every node follows from the configuration
 * snapshot (access log switch, output mode, the level as set last). Records go from the log hub
 * to the shipper's one-way queue; while the shipper is not running (before the boot, after the
 * stop) they are written to standard error directly, so a failed boot still says why.
 */
import { writeSync } from 'node:fs';
import type { Clock } from '../clock/clock.ts';
import type { LogHub, Logger } from '../log/logger.ts';
import type { LogRecord } from '../log/record.ts';
import { appAgent, appLine, logResource, safeJson } from '../log/format.ts';
import { ConsoleBuffer } from '../log/console-buffer.ts';
import { LevelControl, type LevelState } from '../log/level-control.ts';
import type { LogMode, LogSettings } from '../core/logs/log-settings.ts';
import { LogShipperClient, type LogOutputState } from '../actors/logs/client.ts';
import type { AccessEntry } from '../log/access.ts';
import type { Settings } from '../settings/settings.ts';
import { errorAttrs } from '../log/logger.ts';

export interface LogOutputs {
  /** Where the access log goes: standard output unless a test says otherwise. */
  readonly stdoutFd: number;
  /** Where the operational log goes: standard error unless a test says otherwise. */
  readonly stderrFd: number;
}

export const PROCESS_OUTPUTS: LogOutputs = { stdoutFd: 1, stderrFd: 2 };

export interface LogsOptions {
  readonly settings: Settings;
  readonly hub: LogHub;
  readonly clock: Clock;
  readonly version: string;
  readonly outputs: LogOutputs;
  /** The otlp mode is the licensed edition's. */
  readonly licensed: boolean;
}

export class GatewayLogs {
  readonly shipper: LogShipperClient;
  readonly buffer: ConsoleBuffer;
  readonly levels: LevelControl;
  /** The access log switch as this node follows it; read per request. */
  accessOn = false;
  readonly #log: Logger;
  readonly #detach: Array<() => void> = [];
  #wanted: LogMode | null = null;
  #moving: Promise<void> = Promise.resolve();
  #refusedMode: LogMode | null = null;

  constructor(private readonly opts: LogsOptions) {
    const { settings, hub, clock } = opts;
    this.#log = hub.logger();
    this.buffer = new ConsoleBuffer(settings.nodeName);
    this.shipper = new LogShipperClient({
      log: this.#log, clock, format: settings.logFormat, stdoutFd: opts.outputs.stdoutFd, stderrFd: opts.outputs.stderrFd,
      node: settings.nodeName, version: opts.version, otlpEndpoint: settings.otlpEndpoint ?? null,
    });
    this.levels = new LevelControl(hub, settings.logLevel, clock.now(), clock, this.#log);
    this.#detach.push(hub.addSink((r) => this.buffer.add(r)));
    this.#detach.push(hub.addSink((r) => this.#ship(r)));
  }

  start(): Promise<void> {
    return this.shipper.start();
  }

  /** Stops the shipper last of all (what was handed over is written), then writes directly. */
  async stop(): Promise<void> {
    this.levels.close();
    await this.#moving;
    await this.shipper.stop();
  }

  /** Detaches from the hub: a stopped gateway's hub no longer reaches this node's outputs. */
  detach(): void {
    for (const fn of this.#detach.splice(0)) fn();
  }

  access(entry: AccessEntry): void {
    this.shipper.access(entry);
  }

  /** Follows the settings the snapshot carries: level, access switch, output mode. */
  follow(s: LogSettings): void {
    this.levels.apply(s.level);
    if (s.accessLog !== this.accessOn) {
      this.accessOn = s.accessLog;
      this.#log.info(s.accessLog ? 'access log switched on' : 'access log switched off');
    }
    this.#setMode(s.mode);
  }

  level(): LevelState {
    return this.levels.state();
  }

  async output(): Promise<LogOutputState> {
    return this.shipper.state();
  }

  /** Waits until the mode asked last is in place (an API answer reports it). */
  settled(): Promise<void> {
    return this.#moving;
  }

  #setMode(asked: LogMode): void {
    // The push needs the licensed edition and a collector: a node without them keeps writing.
    const mode = asked === 'otlp' && (!this.opts.licensed || !this.opts.settings.otlpEndpoint) ? 'startup' : asked;
    if (mode !== asked && this.#refusedMode !== asked) {
      this.#refusedMode = asked;
      this.#log.warn('log push asked, but this node has no collector to push to (GATEWAY_OTLP_ENDPOINT) or is not the licensed edition; it keeps writing its startup format', { asked });
    }
    if (mode === asked) this.#refusedMode = null;
    if (mode === this.#wanted) return;
    this.#wanted = mode;
    this.#moving = this.#moving
      .then(() => this.shipper.setMode(mode))
      .then(() => this.#log.info('log output mode changed', { mode }))
      .catch((err: unknown) => this.#log.error('log output mode could not change', { mode, ...errorAttrs(err) }));
  }

  #ship(record: LogRecord): void {
    if (this.shipper.running) {
      this.shipper.app(record);
      return;
    }
    // After the stop, in the mode the shipper wrote last: a log agent reads the last lines too.
    const line = this.shipper.mode === 'agent'
      ? safeJson(appAgent(record, logResource(this.opts.version, this.opts.settings.nodeName)))
      : appLine(record, this.opts.settings.logFormat);
    try {
      writeSync(this.opts.outputs.stderrFd, line + '\n');
    } catch {
      // Standard error is gone: nothing is left to say it on.
    }
  }
}
