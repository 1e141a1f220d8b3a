/**
 * AuditBatcher, main-thread side. `record` is what the planes call on the request path: it
 * appends to the one-way queue and returns at once (no promise, no database); a full queue drops
 * the line and counts it in its stream. The calls answer the trail's API.
 */
import type { Logger } from '../../log/logger.ts';
import type { Clock } from '../../clock/clock.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { StoreOptions } from '../../store/orm.ts';
import type { AuditRow } from '../../store/audit.ts';
import type { OperationCall } from '../../core/audit/operations.ts';
import { streamOf, type AuditCalls, type AuditEntry, type AuditEvent, type AuditInit, type AuditRecorder, type AuditStream, type AuditTells, type PushState } from './messages.ts';

export interface AuditClientOptions {
  readonly store: StoreOptions;
  readonly log: Logger;
  readonly clock: Clock;
  readonly node: string;
  readonly licensed: boolean;
  readonly otlpEndpoint: string | null;
}

export class AuditClient implements AuditRecorder {
  readonly host: ActorHost<AuditCalls, AuditInit, AuditEvent, AuditTells>;
  readonly #dropped: Record<AuditStream, number> = { audit: 0, console: 0 };

  constructor(opts: AuditClientOptions) {
    this.host = new ActorHost<AuditCalls, AuditInit, AuditEvent, AuditTells>({
      name: 'audit',
      module: siblingModule(import.meta.url, './actor.ts'),
      init: () => ({ store: opts.store, node: opts.node, licensed: opts.licensed, otlpEndpoint: opts.otlpEndpoint }),
      log: opts.log,
      clock: opts.clock,
      onEvent: () => {},
    });
  }

  start(): Promise<void> { return this.host.start(); }
  stop(): Promise<void> { return this.host.stop(); }
  call: ActorHost<AuditCalls, AuditInit, AuditEvent, AuditTells>['call'] = (type, args, caller) => this.host.call(type, args, caller);

  record(entry: AuditEntry): boolean {
    const queued = this.host.tell('audit.record', entry);
    if (!queued) this.#dropped[streamOf(entry)] += 1;
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
