/** ConfigActor, main-thread side: the typed handle plus the snapshot it keeps current. */
import type { Logger } from '../../log/logger.ts';
import type { Clock } from '../../clock/clock.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { StoreOptions } from '../../store/orm.ts';
import type { AccountView, ConfigCalls, ConfigEvent, ConfigInit, SessionView, Snapshot, TokenView } from './messages.ts';

/** Indexed views of the latest snapshot, for O(1) look-ups on the request path. */
export class ConfigView {
  accountsById = new Map<string, AccountView>();
  accountsByName = new Map<string, AccountView>();
  sessions = new Map<string, SessionView>();
  tokensByHash = new Map<string, TokenView>();
  version = -1;

  apply(event: ConfigEvent): void {
    switch (event.type) {
      case 'snapshot':
        this.replace(event.snapshot);
        return;
      case 'session.added':
        this.sessions.set(event.session.id, event.session);
        return;
      case 'session.removed':
        this.sessions.delete(event.id);
        return;
    }
  }

  private replace(s: Snapshot): void {
    this.version = s.version;
    this.accountsById = new Map(s.accounts.map((a) => [a.id, a]));
    this.accountsByName = new Map(s.accounts.map((a) => [a.name, a]));
    this.sessions = new Map(s.sessions.map((x) => [x.id, x]));
    this.tokensByHash = new Map(s.tokens.map((t) => [t.hash, t]));
  }
}

export class ConfigClient {
  readonly view = new ConfigView();
  readonly host: ActorHost<ConfigCalls, ConfigInit, ConfigEvent>;

  constructor(opts: { store: StoreOptions; log: Logger; clock: Clock; pollMs?: number }) {
    this.host = new ActorHost<ConfigCalls, ConfigInit, ConfigEvent>({
      name: 'config',
      module: siblingModule(import.meta.url, './actor.ts'),
      init: () => ({ store: opts.store, pollMs: opts.pollMs ?? 1000 }),
      log: opts.log,
      clock: opts.clock,
      onEvent: (event) => this.view.apply(event),
    });
  }

  start(): Promise<void> { return this.host.start(); }
  stop(): Promise<void> { return this.host.stop(); }
  call: ActorHost<ConfigCalls, ConfigInit, ConfigEvent>['call'] = (type, args) => this.host.call(type, args);
}
