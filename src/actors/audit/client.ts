/**
 * AuditBatcher, main-thread side. `record` is what the planes call on the request path: it
 * appends to the one-way queue and returns at once (no promise, no database); a full queue drops
 * the line and counts it in its stream. The calls answer the trail's API.
 */
import type { Logger } from '../../log/logger.ts';
import type { Clock } from '../../clock/clock.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { DEFAULT_ONE_WAY } from '../../workers/one-way.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { StoreOptions } from '../../store/orm.ts';
import { randomBytes } from 'node:crypto';
import { auditId, type AuditRow } from '../../store/audit.ts';
import type { OperationCall } from '../../core/audit/operations.ts';
import { streamOf, type Sequenced, type AuditCalls, type AuditEntry, type AuditEvent, type AuditInit, type AuditRecorder, type AuditStream, type AuditTells, type PushState } from './messages.ts';

export interface AuditClientOptions {
  readonly store: StoreOptions;
  readonly log: Logger;
  readonly clock: Clock;
  readonly node: string;
  readonly licensed: boolean;
  readonly otlpEndpoint: string | null;
}

/**
 * Lines told and not yet written that this thread keeps to tell a restarted actor again: as many
 * as the actor itself holds while the database lags (writer.ts), so a crash then loses none.
 * Audited calls are not kept: kept until written, each with its captured body, they outlived the
 * young generation and cost the data plane a fifth more CPU per audited call (bench/audit); the
 * spec lets their queue drop them.
 */
const KEPT_MAX = 50_000;
/**
 * Lines and calls go out every SEND_MS (or 500 at once), not once per turn of the event loop:
 * under load each turn holds a few audited calls, and a message per turn woke the AuditBatcher
 * thousands of times a second on the data plane's core (a tenth of the main thread's profile was
 * `postMessage`). Nobody waits on a told line; a call to the actor sends what waits first.
 */
const SEND_MS = 10;

export class AuditClient implements AuditRecorder {
  readonly host: ActorHost<AuditCalls, AuditInit, AuditEvent, AuditTells>;
  readonly #dropped: Record<AuditStream, number> = { audit: 0, console: 0 };
  /** This process's part of the ids it gives (auditId). */
  readonly #random = randomBytes(6).toString('hex');
  #seq = 0;
  /** Told, not yet written, oldest first (the actor writes them in the order told). */
  #kept: Array<Sequenced<AuditEntry>> = [];
  #started = false;

  constructor(opts: AuditClientOptions) {
    this.host = new ActorHost<AuditCalls, AuditInit, AuditEvent, AuditTells>({
      name: 'audit',
      background: true,
      module: siblingModule(import.meta.url, './actor.ts'),
      init: () => ({ store: opts.store, node: opts.node, licensed: opts.licensed, otlpEndpoint: opts.otlpEndpoint }),
      log: opts.log,
      clock: opts.clock,
      oneWay: { ...DEFAULT_ONE_WAY, flushMs: SEND_MS },
      onEvent: (e) => {
        let n = 0;
        while (n < this.#kept.length && this.#kept[n]!.seq <= e.record) n++;
        if (n > 0) this.#kept.splice(0, n);
      },
      // A restarted actor lost what it held: told again, with the same ids.
      onReady: () => {
        if (this.#started) this.#tellAgain();
        this.#started = true;
      },
    });
  }

  #keep(line: Sequenced<AuditEntry>): void {
    this.#kept.push(line);
    if (this.#kept.length > KEPT_MAX) this.#kept.shift();
  }

  #tellAgain(): void {
    const lines = this.#kept.splice(0).map((l) => ({ ...l, again: true as const }));
    for (const line of lines) if (this.host.tell('audit.record', line)) this.#keep(line); else this.#dropped[streamOf(line)] += 1;
  }

  start(): Promise<void> { return this.host.start(); }
  stop(): Promise<void> { return this.host.stop(); }
  call: ActorHost<AuditCalls, AuditInit, AuditEvent, AuditTells>['call'] = (type, args, caller) => this.host.call(type, args, caller);

  record(entry: AuditEntry): boolean {
    const line = { ...entry, id: auditId(this.#random), seq: ++this.#seq };
    const queued = this.host.tell('audit.record', line);
    if (queued) this.#keep(line);
    else this.#dropped[streamOf(entry)] += 1;
    return queued;
  }

  recordCall(call: OperationCall): boolean {
    const queued = this.host.tell('audit.call', call);
    // An audited call's line is of the data plane's stream.
    if (!queued) this.#dropped.audit += 1;
    return queued;
  }

  /** Lines the config actor wrote in its own transactions: on to the collector push. */
  written(rows: readonly AuditRow[]): void {
    for (const row of rows) {
      if (!this.host.tell('audit.written', row)) this.#dropped[streamOf(row)] += 1;
    }
  }

  /** Drops since start, per stream: this thread's queue plus the worker's. */
  async pushState(): Promise<PushState> {
    const inside = await this.call('audit.state', null);
    return {
      dropped: { audit: this.#dropped.audit + inside.dropped.audit, console: this.#dropped.console + inside.dropped.console },
      queued: inside.queued,
    };
  }
}
