/**
 * Boot and stop of one gateway node: settings → store → actors → planes; stop in reverse order.
 * Cleanup works after a partial start: whatever started is stopped when a later step fails.
 */
import { createClock, ManualClock } from './clock/clock.ts';
import type { LogHub } from './log/logger.ts';
import { SettingsError, type PlaneName, type Settings } from './settings/settings.ts';
import { holdNodeName, NodeNameTakenError, type NodeNameLock } from './store/node-name-lock.ts';
import { GatewayError } from './http/errors.ts';
import type { StoreOptions } from './store/orm.ts';
import { prepareStore } from './workers/prepare/client.ts';
import { SchemaNewerError } from './store/schema-guard.ts';
import { DatabaseRefusedError } from './store/database-refused.ts';
import { DataDirBusyError, holdDataDir } from './store/data-dir-lock.ts';
import { loadMasterKey } from './core/vault/master-key.ts';
import { createTaskPool, type TaskPool } from './workers/pool.ts';
import { boundRegExpBacktracking } from './workers/regexp-fallback.ts';
import { ConfigClient } from './actors/config/client.ts';
import { SchedulesClient } from './actors/schedules/client.ts';
import { AuditClient } from './actors/audit/client.ts';
import { isLicensed } from './planes/edition.ts';
import { openUwsDoor, type Door } from './http/uws-door.ts';
import { openTlsDoor, type TlsDoor } from './http/tls-door.ts';
import { Doors } from './http/doors.ts';
import { CertClient } from './actors/certs/client.ts';
import { followTlsDoors, TLS_PLANE_OF } from './planes/tls-doors.ts';
import type { ExchangeHandler } from './http/exchange.ts';
import { sendFailure } from './http/respond.ts';
import type { GatewayContext, Readiness } from './planes/context.ts';
import { dataPlane } from './planes/data/plane.ts';
import { UpstreamPools } from './pipeline/upstream.ts';
import { readDeclarative, type Declarative } from './core/declarative/document.ts';
import { makeScheduledCall } from './pipeline/scheduled-call.ts';
import { controlPlane } from './planes/control/plane.ts';
import { schedulesLiveSocket } from './planes/control/schedules-live.ts';
import { logsLiveSocket } from './planes/control/logs-live.ts';
import { metricsLiveSocket } from './planes/control/metrics-live.ts';
import { internalPlane } from './planes/internal/plane.ts';
import { VERSION } from './version.ts';
import { formatAddress } from './settings/address.ts';
import { GatewayLogs, PROCESS_OUTPUTS, type LogOutputs } from './planes/logging.ts';
import { RequestRecords, type RecordObserver } from './pipeline/request-record.ts';
import { endpointAudit } from './planes/data/endpoint-audit.ts';
import { accessLog } from './planes/access-log.ts';
import { trafficMetrics } from './planes/traffic-metrics.ts';
import { MetricsClient } from './actors/metrics/client.ts';
import { errorAttrs } from './log/logger.ts';

export interface Gateway {
  readonly ctx: GatewayContext;
  /** Every door open now (plain first). */
  readonly doors: readonly Door[];
  readonly config: ConfigClient;
  /** `http://host:port` of a plane's plain door. */
  url(plane: PlaneName): string;
  /** Stops accepting, drains requests in flight, stops the actors. Idempotent. */
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly hub: LogHub;
  /** Told once when a password was generated for root (printed to standard error by main). */
  readonly onRootPassword?: (password: string) => void;
  /** Where the logs are written: standard output and error unless given (tests hand descriptors of their own). */
  readonly outputs?: LogOutputs;
}

export async function startGateway(settings: Settings, opts: StartOptions): Promise<Gateway> {
  // Before any worker starts: a caller's expression never holds a thread (regexp-fallback.ts).
  boundRegExpBacktracking();
  const log = opts.hub.logger();
  const clock = createClock(settings.clock, settings.clockStart);
  const storeOptions: StoreOptions = { dataDir: settings.dataDir, databaseUrl: settings.databaseUrl };
  const cleanups: Array<() => Promise<void>> = [];
  let draining = false;

  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        log.warn('cleanup step failed', { error: String(err) });
      }
    }
  };

  // A declarative file that cannot be read or has fields of the wrong shape stops the start
  // before anything is opened; what only the catalogue can judge (a role that does not exist)
  // is refused by the configuration actor, the first part that holds the catalogue.
  // A file the gateway cannot read, or whose content it refuses, is a setting refused (exit 78);
  // a database failing while the file is applied stays a failure at run time.
  const configFailure = (err: unknown, content = true) => {
    const message = `GATEWAY_CONFIG ${settings.configFile}: ${(err as Error).message}`;
    return content ? new SettingsError('GATEWAY_CONFIG', message) : new Error(message);
  };
  let declared: Declarative | undefined;
  try {
    declared = settings.configFile ? readDeclarative(settings.configFile) : undefined;
  } catch (err) {
    throw configFailure(err);
  }

  try {
    // Started first and stopped last: what every other part says while it starts and stops is written.
    const logs = new GatewayLogs({ settings, hub: opts.hub, clock, version: VERSION, outputs: opts.outputs ?? PROCESS_OUTPUTS, licensed: isLicensed(settings) });
    cleanups.push(() => logs.stop());
    for (const w of settings.warnings) log.warn(w);
    await logs.start();
    const pool: TaskPool = createTaskPool(log);
    cleanups.push(() => pool.close());

    // One process per SQLite directory: held before the schema is looked at, let go last.
    if (!settings.databaseUrl) {
      const dir = await holdDataDir(settings.dataDir).catch((err: unknown) => {
        if (err instanceof DataDirBusyError) throw new SettingsError('GATEWAY_DATA_DIR', err.message);
        throw err;
      });
      if ('release' in dir) cleanups.push(() => dir.release());
      else log.warn(`the data directory is not guarded: ${dir.unguarded}; a second gateway started on it would not be refused`, { dataDir: settings.dataDir });
    }

    // Schema and first-start seeding happen before any actor opens the store.
    const prepared = await prepareStore({ store: storeOptions, rootPassword: settings.rootPassword, now: clock.now() }).catch((err: unknown) => {
      if (err instanceof SchemaNewerError) throw new SettingsError(settings.databaseUrl ? 'GATEWAY_DATABASE_URL' : 'GATEWAY_DATA_DIR', err.message);
      if (err instanceof DatabaseRefusedError) throw new SettingsError('GATEWAY_DATABASE_URL', err.message);
      throw err;
    });
    if (prepared.applied.length) log.info('database migrated', { driver: settings.databaseUrl ? 'postgresql' : 'sqlite', applied: prepared.applied.join(',') });
    if (prepared.rootCreated) log.info('root account created', { generatedPassword: prepared.generatedPassword !== undefined });
    if (prepared.generatedPassword) opts.onRootPassword?.(prepared.generatedPassword);
    const masterKey = loadMasterKey(settings.vaultKey, settings.dataDir, settings.databaseUrl !== undefined, log);
    // Before any actor opens the store: what a node owns in the cluster's tables is keyed by its name.
    if (settings.databaseUrl) {
      let name: NodeNameLock;
      try {
        name = await holdNodeName(settings.databaseUrl, settings.nodeName, log);
      } catch (err) {
        if (err instanceof NodeNameTakenError) throw new SettingsError('GATEWAY_NODE_NAME', err.message);
        throw err;
      }
      // Pushed before the actors: released after every one of them stopped.
      cleanups.push(() => name.release());
    }

    // Stopped last: whatever the other parts record while they stop is written.
    const audit = new AuditClient({
      store: storeOptions, log, clock, node: settings.nodeName, licensed: isLicensed(settings), otlpEndpoint: settings.otlpEndpoint ?? null,
    });
    cleanups.push(() => audit.stop());
    const config = new ConfigClient({ store: storeOptions, log, clock, masterKey, node: settings.nodeName, onAuditWritten: (rows) => audit.written(rows) });
    cleanups.push(() => config.stop());
    const certs = new CertClient({
      store: storeOptions, log, clock, masterKey, node: settings.nodeName, dataDir: settings.dataDir,
      internalNames: settings.internalNames, onAuditWritten: (rows) => audit.written(rows), licensed: isLicensed(settings),
      mail: settings.smtpUrl ? { url: settings.smtpUrl, from: settings.smtpFrom, to: settings.digestTo } : null,
      digestHorizonDays: settings.digestHorizonDays,
    });
    cleanups.push(() => certs.stop());
    const metrics = new MetricsClient({ store: storeOptions, log, clock, node: settings.nodeName });
    cleanups.push(() => metrics.stop());
    // Each of these opens the store and reads its own tables, none waits on another (what one tells
    // another before it is ready waits in that one's queue): a worker's start is mostly loading its
    // modules, so started together they take the time of the slowest instead of the sum. The
    // scheduler follows: a turn due at once makes its call through the configuration and the
    // certificates' views.
    await startTogether([audit, config, certs, metrics]);
    if (declared) {
      let applied: { created: number; updated: number };
      try {
        applied = await config.call('config.apply', declared);
      } catch (err) {
        throw configFailure(err, err instanceof GatewayError && err.status < 500);
      }
      log.info('declarative configuration applied', { file: settings.configFile, ...applied });
    }
    logs.follow(config.view.logs);
    config.view.onSnapshot(() => logs.follow(config.view.logs));
    // The pools begin with the snapshot the start delivered and follow every later one (trusted
    // authorities, origins no route uses any more) from here, before any call can be made.
    const pools = new UpstreamPools(config.view.trustedAuthorities, (state, origin, detail) => {
      if (state === 'down') log.warn('upstream down: the service stopped answering', { origin, ...detail });
      else log.info('upstream back: the service answers again', { origin, ...detail });
    });
    cleanups.push(() => pools.close());
    config.view.onSnapshot(() => {
      pools.trust(config.view.trustedAuthorities);
      pools.retain(new Set(config.view.origins.values()));
    });
    metrics.declare([...config.view.routesById.values()]);
    config.view.onSnapshot(() => metrics.declare([...config.view.routesById.values()]));
    // Observers join once the context exists; scheduled calls and every plane share the records.
    const observers: RecordObserver[] = [];
    const records = new RequestRecords(observers, (err) => log.error('a request record observer failed', errorAttrs(err)));
    const schedules = new SchedulesClient({
      store: storeOptions, log, clock, node: settings.nodeName, masterKey, shards: settings.schedulerShards, maxCalls: settings.schedulerMaxCalls,
      makeCall: (call, sent) => makeScheduledCall(config.view, pools, call, clock.now(), { onSent: sent, issuer: certs.view.issuer, records, clock }),
    });
    cleanups.push(() => schedules.stop());
    await schedules.start();
    const actors = [logs.shipper.host, audit.host, config.host, certs.host, metrics.host, ...schedules.hosts];

    // Said once on the operational log, however often the probe asks.
    let schemaNewerSaid = false;
    const readiness = async (): Promise<Readiness> => {
      let database: Readiness['database'] = 'ok';
      try {
        const { newer } = await Promise.race([
          config.call('ping', null),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
        ]);
        if (newer.length > 0) {
          database = 'schema-newer';
          if (!schemaNewerSaid) log.error('a newer build migrated the database: this node is no longer ready; replace it with the newer build (docs/upgrade.md)', { migrations: newer.join(',') });
          schemaNewerSaid = true;
        }
      } catch {
        database = 'unreachable';
      }
      const states = Object.fromEntries(actors.map((a) => [a.name, a.state]));
      return { ready: database === 'ok' && actors.every((a) => a.state === 'ready'), database, actors: states };
    };

    let handlers: Record<PlaneName, ExchangeHandler> | undefined;
    const sockets = (plane: PlaneName) => (plane === 'control' ? { sockets: [schedulesLiveSocket(ctx), logsLiveSocket(ctx), metricsLiveSocket(ctx)] } : {});
    const doors: Doors = new Doors({
      plain: (plane, host, port) => openUwsDoor({
        plane, host, port, clock, handler: handlers![plane], onError: (err, ex) => sendFailure(ex, err, log), ...sockets(plane),
      }),
      https: (plane): Promise<TlsDoor> => openTlsDoor({
        plane, host: settings.listenTls[plane].host, port: doors.https(plane)?.port ?? settings.listenTls[plane].port, clock,
        handler: handlers![plane], onError: (err, ex) => sendFailure(ex, err, log), ...sockets(plane),
        resolve: (name) => certs.view.contextFor(TLS_PLANE_OF[plane], name, clock.now()),
        onHandshakeError: (err, name) => log.debug('TLS handshake refused', { plane, serverName: name ?? null, error: err.message }),
        // ACME is not offered on the internal plane (spec 1.2 rule 4).
        ...(plane !== 'internal' ? { alpn: (name: string) => certs.challenges.alpn01(name) } : {}),
      }),
    }, log);
    const tlsDoors = followTlsDoors({ view: certs.view, doors, settings, log });
    const ctx: GatewayContext = {
      settings, version: VERSION, hub: opts.hub, log, clock, config, schedules, audit, certs, doors, tlsDoors, pool, logs, records, metrics,
      // Once a certificate is placed, sentences name the HTTPS address (spec 1.2 rule 4).
      doorAddress: (plane) => {
        const https = doors.https(plane);
        return https ? `https://${https.address}` : `http://${doors.plain(plane)?.address ?? formatAddress(settings.listen[plane].host, settings.listen[plane].port)}`;
      },
      draining: () => draining,
      readiness,
      ...(clock instanceof ManualClock
        ? {
            advanceClock: async (ms: number) => {
              const now = clock.advance(ms);
              await Promise.all(actors.map((a) => a.syncClock(now)));
              return now;
            },
          }
        : {}),
    };

    observers.push(endpointAudit(ctx), accessLog(ctx), trafficMetrics(ctx));
    schedules.followTokens(config.view);
    handlers = {
      data: dataPlane(ctx, pools),
      control: controlPlane(ctx),
      internal: internalPlane(ctx),
    };
    cleanups.push(async () => doors.close());
    tlsDoors.openPlain();
    // HTTPS doors of the certificates already placed.
    await tlsDoors.reconcile();
    log.info('gateway started', { version: VERSION, node: settings.nodeName, database: settings.databaseUrl ? 'postgresql' : 'sqlite', clock: clock.kind });

    let stopping: Promise<void> | undefined;
    return {
      ctx,
      get doors() { return doors.all(); },
      config,
      url: (plane) => {
        const d = doors.plain(plane)!;
        const host = d.address.replace(/:\d+$/, '').replace(/^0\.0\.0\.0$/, '127.0.0.1').replace(/^\[::\]$/, '[::1]');
        return `http://${host}:${d.port}`;
      },
      stop: () => {
        stopping ??= (async () => {
          draining = true;
          log.info('stopping: no new connections; draining requests in flight', { inFlight: doors.inFlight });
          doors.stopAccepting();
          // Turns first: a node that drains for 30 s must not take new ones meanwhile.
          await schedules.quiesce();
          await doors.drain(settings.drainTimeoutMs);
          const left = doors.inFlight;
          if (left > 0) log.warn('drain timeout: closing requests still in flight', { inFlight: left });
          await cleanup();
          log.info('gateway stopped');
          logs.detach();
        })();
        return stopping;
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/**
 * Starts each part and waits for all of them: a failure is thrown once every start has ended, so
 * the cleanup that follows never stops a part still starting.
 */
async function startTogether(parts: ReadonlyArray<{ start(): Promise<void> }>): Promise<void> {
  const ended = await Promise.allSettled(parts.map((p) => p.start()));
  const failed = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
  if (failed) throw failed.reason;
}
