/** ConfigActor, main-thread side: the typed handle plus the snapshot it keeps current. */
import type { Logger } from '../../log/logger.ts';
import type { Clock } from '../../clock/clock.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { StoreOptions } from '../../store/orm.ts';
import type { OrganisationView, RoleView, RouteView } from '../../core/model.ts';
import { RouteTable } from '../../pipeline/route-table.ts';
import { RoleGraph } from '../../pipeline/roles.ts';
import { IdentitySigner } from '../../pipeline/identity.ts';
import { EndpointRules } from '../../pipeline/endpoint-rules.ts';
import type { AuditRow } from '../../store/audit.ts';
import { DEFAULT_LOG_SETTINGS, type LogSettings } from '../../core/logs/log-settings.ts';
import { endpointIndex } from '../../core/routes/endpoints.ts';
import type { TemplateIndex, Templated } from '../../core/routes/template-index.ts';
import { compileOperationAudit, type OperationAuditIndex } from '../../core/audit/operations.ts';
import type { AccountView, ConfigCalls, ConfigEvent, ConfigInit, SessionView, Snapshot, TokenView } from './messages.ts';

/**
 * Indexed views of the latest snapshot, for O(1) look-ups on the request path. A new snapshot
 * replaces every structure at once; a request holding the old ones finishes on them.
 */
export class ConfigView {
  accountsById = new Map<string, AccountView>();
  accountsByName = new Map<string, AccountView>();
  sessions = new Map<string, SessionView>();
  tokensByHash = new Map<string, TokenView>();
  tokensById = new Map<string, TokenView>();
  routesById = new Map<string, RouteView>();
  organisations = new Map<string, OrganisationView>();
  /** The catalogue, by name, in name order. */
  rolesByName = new Map<string, RoleView>();
  routeTable = new RouteTable([]);
  /** Each route's upstream origin (`http://host:port`): the key of its connection pool. */
  origins = new Map<string, string>();
  /** Compiled endpoint rules of each route that has some. */
  endpointRules = new Map<string, EndpointRules>();
  roles = new RoleGraph([]);
  /**
   * Compiled endpoint audit of each route with an operation switched on. Built on every edition;
   * the data plane applies it on the licensed one only (rules are kept, not applied, elsewhere).
   */
  operationAudits = new Map<string, OperationAuditIndex>();
  /** Declared endpoint templates of each route that declares some (access log, metrics). */
  endpoints = new Map<string, TemplateIndex<Templated>>();
  /** The trusted authorities' PEMs: https upstreams are verified against them and the public ones. */
  trustedAuthorities: readonly string[] = [];
  /** The log settings every node follows. */
  logs: LogSettings = DEFAULT_LOG_SETTINGS;
  /** undefined when this node holds no signing key it can open (identity: jwt routes answer 503). */
  signer: IdentitySigner | undefined;

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
      case 'audit.written':
        return;
    }
  }

  private replace(s: Snapshot): void {
    this.accountsById = new Map(s.accounts.map((a) => [a.id, a]));
    this.accountsByName = new Map(s.accounts.map((a) => [a.name, a]));
    this.sessions = new Map(s.sessions.map((x) => [x.id, x]));
    this.tokensByHash = new Map(s.tokens.map((t) => [t.hash, t]));
    this.tokensById = new Map(s.tokens.map((t) => [t.id, t]));
    this.routesById = new Map(s.routes.map((r) => [r.id, r]));
    this.organisations = new Map(s.organisations.map((o) => [o.id, o]));
    this.routeTable = new RouteTable(s.routes);
    this.origins = new Map(s.routes.map((r) => [r.id, new URL(r.upstream).origin]));
    this.endpointRules = new Map(s.routes.filter((r) => r.endpointRules.length > 0).map((r) => [r.id, new EndpointRules(r.endpointRules)]));
    this.operationAudits = operationAudits(s.routes);
    this.endpoints = new Map();
    for (const r of s.routes) {
      const index = endpointIndex(r.endpoints ?? []);
      if (index) this.endpoints.set(r.id, index);
    }
    this.rolesByName = new Map(s.roles.map((r) => [r.name, r]));
    this.roles = new RoleGraph(s.roles);
    this.trustedAuthorities = s.trustedAuthorities;
    this.logs = s.logs;
    // Keys change rarely: keep the signer (and its token cache) while the key set is the same.
    const kids = s.signingKeys.map((k) => k.kid).join(',');
    if (kids !== this.signerKids) {
      this.signerKids = kids;
      this.signer = s.signingKeys.length > 0 ? new IdentitySigner(s.signingKeys) : undefined;
    }
    for (const fn of this.listeners) fn();
  }

  private readonly listeners: Array<() => void> = [];

  /** Runs after each new snapshot is in place. */
  onSnapshot(fn: () => void): void {
    this.listeners.push(fn);
  }

  private signerKids = '';
}

function operationAudits(routes: readonly RouteView[]): Map<string, OperationAuditIndex> {
  const out = new Map<string, OperationAuditIndex>();
  for (const r of routes) {
    if (!r.audit) continue;
    const index = compileOperationAudit(r.audit.contract, r.audit.rules);
    if (index) out.set(r.id, index);
  }
  return out;
}

export class ConfigClient {
  readonly view = new ConfigView();
  readonly host: ActorHost<ConfigCalls, ConfigInit, ConfigEvent>;

  constructor(opts: {
    store: StoreOptions; log: Logger; clock: Clock; masterKey: Buffer; node: string; pollMs?: number;
    /** Audit lines the actor committed with a change (for the collector push). */
    onAuditWritten?: (rows: readonly AuditRow[]) => void;
  }) {
    this.host = new ActorHost<ConfigCalls, ConfigInit, ConfigEvent>({
      name: 'config',
      module: siblingModule(import.meta.url, './actor.ts'),
      init: () => ({ store: opts.store, pollMs: opts.pollMs ?? 1000, masterKey: opts.masterKey.toString('base64'), node: opts.node }),
      log: opts.log,
      clock: opts.clock,
      onEvent: (event) => {
        if (event.type === 'audit.written') opts.onAuditWritten?.(event.rows);
        else this.view.apply(event);
      },
    });
  }

  start(): Promise<void> { return this.host.start(); }
  stop(): Promise<void> { return this.host.stop(); }
  call: ActorHost<ConfigCalls, ConfigInit, ConfigEvent>['call'] = (type, args, caller) => this.host.call(type, args, caller);
}
