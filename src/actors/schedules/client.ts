/** SchedulesActor, main-thread side. */
import type { Logger } from '../../log/logger.ts';
import type { Clock } from '../../clock/clock.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { StoreOptions } from '../../store/orm.ts';
import type { SchedulesCalls, SchedulesInit } from './messages.ts';

export class SchedulesClient {
  readonly host: ActorHost<SchedulesCalls, SchedulesInit, never>;

  constructor(opts: { store: StoreOptions; log: Logger; clock: Clock }) {
    this.host = new ActorHost<SchedulesCalls, SchedulesInit, never>({
      name: 'schedules',
      module: siblingModule(import.meta.url, './actor.ts'),
      init: () => ({ store: opts.store }),
      log: opts.log,
      clock: opts.clock,
      onEvent: () => {},
    });
  }

  start(): Promise<void> { return this.host.start(); }
  stop(): Promise<void> { return this.host.stop(); }
  call: ActorHost<SchedulesCalls, SchedulesInit, never>['call'] = (type, args) => this.host.call(type, args);
}
