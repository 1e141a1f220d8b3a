/** MetricsRing, worker side: names endpoints, keeps the ring, shares it with the other nodes. */
import { runActor } from '../../workers/actor-runtime.ts';
import { every } from '../../clock/every.ts';
import { openStore } from '../../store/orm.ts';
import { errorAttrs } from '../../log/logger.ts';
import { MetricsRing, INTERVAL_MS } from '../../core/metrics/ring.ts';
import { RouteEndpoints } from '../../core/metrics/endpoint-names.ts';
import { endpointIndex } from '../../core/routes/endpoints.ts';
import { sumNodes } from '../../core/metrics/wire.ts';
import { PERIOD } from '../../core/metrics/summary.ts';
import type { Templated } from '../../core/routes/template-index.ts';
import { sumEndpoints } from '../../core/metrics/cluster-endpoints.ts';
import type { EndpointPoint } from '../../core/metrics/ring.ts';
import { clearOwnHistory, readHistory, readOthers, sweepHistory, sweepNodes, writeHistory, writeOwn } from './node-rows.ts';
import { SAMPLE_WIDTH, type MetricsCalls, type MetricsEvent, type MetricsInit, type MetricsTells, type SampleBatch } from './messages.ts';
import { OUTCOMES } from './samples.ts';

/** History points held at most while the database cannot take them. */
const PENDING_MAX = 50_000;

runActor<MetricsInit, MetricsCalls, MetricsEvent, MetricsTells>(async (init, ctx) => {
  const store = await openStore({ ...init.store, poolSize: 1 });
  const ring = new MetricsRing(ctx.clock.now());
  const names = new Map<string, RouteEndpoints>();
  let declared: Record<string, readonly Templated[]> = {};
  let failing = false;
  /** This node's history rows from before its start are removed once, before it writes any. */
  let historyCleared = false;
  /** The clock minute of the last sweep of old history rows: one sweep a minute is enough. */
  let sweptMinute = -1;
  /** History points not written yet (the database was away); a rewrite per route relabelled by a fold. */
  let pendingPoints: EndpointPoint[] = [];
  const pendingRewrites = new Map<string, EndpointPoint[]>();
  const takeHistory = () => {
    const { fresh, rewritten } = ring.takeHistory();
    for (const [route, points] of rewritten) pendingRewrites.set(route, points);
    pendingPoints = [...pendingPoints.filter((p) => !rewritten.has(p.route)), ...fresh];
    // Seventy minutes of a large gateway's endpoints at most; older points are this node's own still.
    if (pendingPoints.length > PENDING_MAX) pendingPoints = pendingPoints.slice(-PENDING_MAX);
  };

  const namesOf = (route: string): RouteEndpoints => {
    let n = names.get(route);
    if (n === undefined) names.set(route, (n = new RouteEndpoints(endpointIndex(declared[route] ?? []))));
    return n;
  };

  const record = (batches: readonly SampleBatch[]) => {
    for (const { keys, samples } of batches) {
      // Each distinct path is named once a batch; a fold renames labels, so names are taken again after one.
      let named: Array<{ template: string | null; deduced: boolean } | undefined> = [];
      for (let i = 0; i < samples.length; i += SAMPLE_WIDTH) {
        const k = samples[i]!;
        const [route, method, path] = keys[k]!;
        const at = samples[i + 3]!;
        let n = named[k];
        if (n === undefined) {
          // A call no route took (or without a service path) has no endpoint.
          const name = route !== null && path !== null ? namesOf(route).name(method, path, at) : null;
          if (name?.renamed) {
            ring.rename(route!, name.renamed);
            named = [];
          }
          n = named[k] = { template: name?.template ?? null, deduced: name?.deduced ?? false };
        }
        ring.record({ route, template: n.template, deduced: n.deduced, outcome: OUTCOMES[samples[i + 1]!]!, us: samples[i + 2]!, at });
      }
    }
  };

  /** Every other node's latest summary and this node's own, summed at `now`. */
  const cluster = async (now = ctx.clock.now()) => {
    const others = await readOthers(store, init.node, now);
    return sumNodes([ring.snapshotForWire(now), ...others], now);
  };

  const loop = every(ctx.clock, INTERVAL_MS, async () => {
    const now = ctx.clock.now();
    ring.tick(now);
    for (const n of names.values()) n.sweep(now);
    takeHistory();
    try {
      await writeOwn(store, init.node, now, ring.snapshotForWire(now));
      await sweepNodes(store, now);
      if (!historyCleared) {
        await clearOwnHistory(store, init.node);
        historyCleared = true;
      }
      if (pendingPoints.length > 0 || pendingRewrites.size > 0) {
        await writeHistory(store, init.node, pendingPoints, pendingRewrites);
        pendingPoints = [];
        pendingRewrites.clear();
      }
      if (Math.floor(now / 60_000) !== sweptMinute) {
        await sweepHistory(store, now);
        sweptMinute = Math.floor(now / 60_000);
      }
      // Summed at the tick's instant, as written: the interval sent is the one this tick closed.
      ctx.emit({ type: 'interval', metrics: await cluster(now) });
      if (failing) ctx.log.info('metrics: the other nodes\' summaries are read and written again');
      failing = false;
    } catch (err) {
      // The ring goes on in memory: this node's own numbers never wait on the database.
      if (!failing) ctx.log.warn('metrics: the summaries of the other nodes cannot be shared now; this node shows its own', errorAttrs(err));
      failing = true;
      ctx.emit({ type: 'interval', metrics: sumNodes([ring.snapshotForWire(now)], now) });
    }
  }, (err) => ctx.log.error('metrics: an interval could not be closed', errorAttrs(err)), { rate: 'fixed' });

  return {
    told: { 'metrics.samples': record },
    handlers: {
      'metrics.snapshot': async () => {
        try {
          return await cluster();
        } catch {
          const now = ctx.clock.now();
          return sumNodes([ring.snapshotForWire(now)], now);
        }
      },
      'metrics.route': async ({ id }) => {
        const now = ctx.clock.now();
        try {
          const own = ring.snapshotForWire(now);
          const others = await readOthers(store, init.node, now);
          const history = await readHistory(store, init.node, id, now);
          const minutes = [own, ...others].flatMap((s) => s.endpoints?.[id] ?? []);
          const nodes = 1 + others.filter((s) => s.stale !== true).length;
          return { route: id, period: PERIOD, nodes, endpoints: sumEndpoints(minutes, [...ring.history(id), ...history]) };
        } catch {
          // The database away: this node's own endpoints, as the snapshot shows its own numbers.
          return { route: id, period: PERIOD, nodes: 1, endpoints: ring.endpoints(id, now) };
        }
      },
      'routes.declared': ({ routes }) => {
        declared = routes;
        for (const [route, n] of names) n.redeclare(endpointIndex(declared[route] ?? []));
        return null;
      },
    },
    stop: async () => {
      await loop.stop();
      await store.close();
    },
  };
});
