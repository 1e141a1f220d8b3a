/**
 * The ScheduleActors, main-thread side: one actor per shard, each in its own worker, each firing
 * the schedules of its buckets (shards.ts). A call about one schedule goes to its owner, so the
 * owner's engine wakes at once on a change; a listing may go to any shard.
 */
import type { Logger } from '../../log/logger.ts';
import type { Clock } from '../../clock/clock.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { StoreOptions } from '../../store/orm.ts';
import { newId } from '../../core/secrets.ts';
import type { CallOutcome, ScheduledCall, SchedulesCalls, SchedulesEvent, SchedulesInit, SchedulesTells } from './messages.ts';
import { DEFAULT_ONE_WAY } from '../../workers/one-way.ts';
import type { ConfigView } from '../config/client.ts';
import { errorAttrs } from '../../log/logger.ts';
import type { FeedListener } from './messages.ts';
import { shardOf } from './shards.ts';

export interface SchedulesClientOptions {
  readonly store: StoreOptions;
  readonly log: Logger;
  readonly clock: Clock;
  readonly node: string;
  readonly masterKey: Buffer;
  /** ScheduleActors on this node. */
  readonly shards: number;
  readonly maxCalls: number;
  /** Makes a scheduled call through the data-plane pipeline (main thread); `sent` when the request has left. */
  readonly makeCall: (call: ScheduledCall, sent: () => void) => Promise<CallOutcome>;
}

type Host = ActorHost<SchedulesCalls, SchedulesInit, SchedulesEvent, SchedulesTells>;

export class SchedulesClient {
  readonly hosts: readonly Host[];
  readonly #feed = new Set<FeedListener>();
  #wanted: Promise<void> = Promise.resolve();
  #next = 0;

  constructor(private readonly opts: SchedulesClientOptions) {
    this.hosts = Array.from({ length: opts.shards }, (_, shard) => {
      const host: Host = new ActorHost<SchedulesCalls, SchedulesInit, SchedulesEvent, SchedulesTells>({
        name: `schedules-${shard}`,
        module: siblingModule(import.meta.url, './actor.ts'),
        init: () => ({ store: opts.store, node: opts.node, masterKey: opts.masterKey.toString('base64'), shard, shards: opts.shards, maxCalls: opts.maxCalls, feedWanted: this.#feed.size > 0 }),
        log: opts.log,
        clock: opts.clock,
        onEvent: (event) => this.#onEvent(host, event),
        // Every answer of the calls in flight fits: none is dropped.
        oneWay: { ...DEFAULT_ONE_WAY, capacity: Math.max(DEFAULT_ONE_WAY.capacity, opts.maxCalls) },
      });
      return host;
    });
  }

  #onEvent(host: Host, event: SchedulesEvent): void {
    if (event.type === 'feed') {
      for (const fn of this.#feed) fn(event.event);
      return;
    }
    // The call runs on the main thread's I/O; its outcome goes back to the actor that asked,
    // gathered with the others that ended in the same turn of the event loop (one write for all).
    const { scheduleId, runId, attempt } = event.call;
    // The waiting phase is a one-way record: nothing awaits it, and a full queue only costs the phase shown.
    void this.opts.makeCall(event.call, () => { host.tell('run.sent', { scheduleId, runId, attempt }); }).then(
      (outcome) => { host.tell('run.outcomes', outcome); },
      (err: unknown) => this.opts.log.error('a scheduled call failed inside the gateway; the lease settles it', { schedule: event.call.scheduleId, run: event.call.runId, ...errorAttrs(err) }),
    );
  }

  /**
   * Listens to the scheduler feed (runs starting, advancing, finishing; schedules changing). The
   * actors send the feed to this thread only while someone listens: a busy minute with no console
   * open costs no messages. `feedReady()` resolves once every actor knows.
   */
  onFeed(fn: FeedListener): () => void {
    this.#feed.add(fn);
    if (this.#feed.size === 1) this.#want(true);
    return () => {
      if (this.#feed.delete(fn) && this.#feed.size === 0) this.#want(false);
    };
  }

  feedReady(): Promise<void> {
    return this.#wanted;
  }

  #want(on: boolean): void {
    this.#wanted = Promise.all(this.hosts.map((h) => h.call('feed.want', { on }).catch((err: unknown) => {
      // A restarting actor reads the current answer from its init.
      this.opts.log.debug('an actor did not hear whether the feed is wanted', { actor: h.name, ...errorAttrs(err) });
    }))).then(() => undefined);
  }

  async start(): Promise<void> {
    await Promise.all(this.hosts.map((h) => h.start()));
  }

  /** First step of a stop: every engine stops taking turns and hands its calls in flight over. */
  async quiesce(): Promise<void> {
    await Promise.all(this.hosts.map((h) => h.call('engine.quiesce', null).catch((err: unknown) => {
      this.opts.log.warn('a scheduler did not hand over before the drain; its stop does', { actor: h.name, ...errorAttrs(err) });
    })));
  }

  async stop(): Promise<void> {
    await Promise.all(this.hosts.map((h) => h.stop()));
  }

  /**
   * Schedules tokens that leave the configuration (revoked here, on another node, or by the CLI):
   * their schedules stop at once rather than at their next turn. The call-time check still bounds
   * every call, whatever this misses.
   */
  followTokens(view: ConfigView): void {
    const scheduleTokens = () => new Set([...view.tokensById.values()].filter((t) => t.kind === 'schedules').map((t) => t.id));
    let known = scheduleTokens();
    view.onSnapshot(() => {
      const current = scheduleTokens();
      this.#tokensGone([...known].filter((id) => !current.has(id)));
      known = current;
    });
  }

  #tokensGone(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.call('tokens.revoked', { ids }).catch((err: unknown) => {
      this.opts.log.warn('schedules of revoked tokens could not be stopped now; their next call stops them', { tokens: ids.join(','), ...errorAttrs(err) });
    });
  }

  /** Routes a call: by the schedule's id to its owner; a new schedule gets its id here. */
  call<K extends keyof SchedulesCalls & string>(type: K, args: SchedulesCalls[K]['args']): Promise<SchedulesCalls[K]['result']> {
    const a = (args ?? {}) as { id?: unknown };
    if (type === 'schedule.create' && typeof a.id !== 'string') {
      return this.call(type, { ...args, id: `sch_${newId()}` });
    }
    const host = typeof a.id === 'string'
      ? this.hosts[shardOf(a.id, this.hosts.length)]!
      : this.hosts[this.#next++ % this.hosts.length]!;
    return host.call(type, args);
  }
}
