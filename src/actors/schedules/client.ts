/** SchedulesActor, main-thread side. */
import type { Logger } from '../../log/logger.ts';
import type { Clock } from '../../clock/clock.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { StoreOptions } from '../../store/orm.ts';
import type { CallOutcome, ScheduledCall, SchedulesCalls, SchedulesEvent, SchedulesInit } from './messages.ts';
import { errorAttrs } from '../../log/logger.ts';
import type { FeedListener } from './feed.ts';

export interface SchedulesClientOptions {
  readonly store: StoreOptions;
  readonly log: Logger;
  readonly clock: Clock;
  readonly node: string;
  readonly masterKey: Buffer;
  /** Makes a scheduled call through the data-plane pipeline (main thread). */
  readonly makeCall: (call: ScheduledCall) => Promise<CallOutcome>;
}

export class SchedulesClient {
  readonly #feed = new Set<FeedListener>();
  readonly host: ActorHost<SchedulesCalls, SchedulesInit, SchedulesEvent>;

  constructor(opts: SchedulesClientOptions) {
    this.host = new ActorHost<SchedulesCalls, SchedulesInit, SchedulesEvent>({
      name: 'schedules',
      module: siblingModule(import.meta.url, './actor.ts'),
      init: () => ({ store: opts.store, node: opts.node, masterKey: opts.masterKey.toString('base64') }),
      log: opts.log,
      clock: opts.clock,
      onEvent: (event) => {
        if (event.type === 'feed') {
          for (const fn of this.#feed) fn(event.event);
          return;
        }
        // The call runs on the main thread's I/O; its outcome goes back to the actor.
        void opts.makeCall(event.call)
          .then((outcome) => this.host.call('run.outcome', outcome))
          .catch((err: unknown) => opts.log.error('a scheduled call could not be reported back; the lease settles it', { schedule: event.call.scheduleId, run: event.call.runId, ...errorAttrs(err) }));
      },
    });
  }

  /** Listens to the scheduler feed (runs starting, advancing, finishing; schedules changing). */
  onFeed(fn: FeedListener): () => void {
    this.#feed.add(fn);
    return () => { this.#feed.delete(fn); };
  }

  start(): Promise<void> { return this.host.start(); }
  stop(): Promise<void> { return this.host.stop(); }
  call: ActorHost<SchedulesCalls, SchedulesInit, SchedulesEvent>['call'] = (type, args) => this.host.call(type, args);
}
