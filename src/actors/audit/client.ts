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
 * as the actor itself holds while the database lags (writer.ts), so a crash then loses none. An
 * audited call may carry a captured body of 64 KB: fewer of those are kept (the spec lets their
 * queue drop them), so that a database outage under a flood of them cannot take this thread's
 * memory.
 */
const KEPT_MAX = { 'audit.record': 50_000, 'audit.call': 5_000 } as const;

export class AuditClient implements AuditRecorder {
  readonly host: ActorHost<AuditCalls, AuditInit, AuditEvent, AuditTells>;
  readonly #dropped: Record<AuditStream, number> = { audit: 0, console: 0 };
  /** This process's part of the ids it gives (auditId). */
  readonly #random = randomBytes(6).toString('hex');
  #seq = 0;
  /** Told, not yet written, oldest first (the actor writes each kind in the order told). */
  readonly #kept: { 'audit.record': Array<Sequenced<AuditEntry>>; 'audit.call': Array<Sequenced<OperationCall>> } = { 'audit.record': [], 'audit.call': [] };
  #started = false;

  constructor(opts: AuditClientOptions) {
    this.host = new ActorHost<AuditCalls, AuditInit, AuditEvent, AuditTells>({
      name: 'audit',
      module: siblingModule(import.meta.url, './actor.ts'),
      init: () => ({ store: opts.store, node: opts.node, licensed: opts.licensed, otlpEndpoint: opts.otlpEndpoint }),
      log: opts.log,
      clock: opts.clock,
      onEvent: (e) => {
        this.#forget(this.#kept['audit.record'], e.record);
        this.#forget(this.#kept['audit.call'], e.call);
      },
      // A restarted actor lost what it held: told again, with the same ids.
      onReady: () => {
        if (this.#started) this.#tellAgain();
        this.#started = true;
      },
    });
  }

  #forget(kept: Array<{ readonly seq: number }>, upTo: number): void {
    let n = 0;
    while (n < kept.length && kept[n]!.seq <= upTo) n++;
    if (n > 0) kept.splice(0, n);
  }

  #keep<K extends 'audit.record' | 'audit.call'>(kind: K, item: AuditTells[K]): void {
    const kept = this.#kept[kind] as Array<AuditTells[K]>;
    kept.push(item);
    if (kept.length > KEPT_MAX[kind]) kept.shift();
  }

  #tellAgain(): void {
    const lines = this.#kept['audit.record'].splice(0).map((l) => ({ ...l, again: true as const }));
    const calls = this.#kept['audit.call'].splice(0).map((c) => ({ ...c, again: true as const }));
    for (const line of lines) if (this.host.tell('audit.record', line)) this.#keep('audit.record', line); else this.#dropped[streamOf(line)] += 1;
    for (const call of calls) if (this.host.tell('audit.call', call)) this.#keep('audit.call', call); else this.#dropped.audit += 1;
  }

  start(): Promise<void> { return this.host.start(); }
  stop(): Promise<void> { return this.host.stop(); }
  call: ActorHost<AuditCalls, AuditInit, AuditEvent, AuditTells>['call'] = (type, args, caller) => this.host.call(type, args, caller);

  record(entry: AuditEntry): boolean {
    const line = { ...entry, id: auditId(this.#random), seq: ++this.#seq };
    const queued = this.host.tell('audit.record', line);
    if (queued) this.#keep('audit.record', line);
    else this.#dropped[streamOf(entry)] += 1;
    return queued;
  }

  recordCall(call: OperationCall): boolean {
    const told = { ...call, id: auditId(this.#random), seq: ++this.#seq };
    const queued = this.host.tell('audit.call', told);
    if (queued) this.#keep('audit.call', told);
    // An audited call's line is of the data plane's stream.
    else this.#dropped.audit += 1;
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
