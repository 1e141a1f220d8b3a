/** MetricsRing, worker side: names endpoints, keeps the ring, shares it with the other nodes. */
import { runActor } from '../../workers/actor-runtime.ts';
import { every } from '../../clock/every.ts';
import { openStore } from '../../store/orm.ts';
import { errorAttrs } from '../../log/logger.ts';
import { MetricsRing, INTERVAL_MS } from '../../core/metrics/ring.ts';
import { RouteNames } from '../../core/metrics/route-names.ts';
import { sumNodes } from '../../core/metrics/wire.ts';
import { PERIOD } from '../../core/metrics/summary.ts';
import type { WireSnapshot } from '../../core/metrics/wire.ts';
import { readOthers, sweepNodes, writeOwn } from './node-rows.ts';
import { SharedEndpoints } from './shared-endpoints.ts';
import { type MetricsCalls, type MetricsEvent, type MetricsInit, type MetricsTells, type SampleBatch } from './messages.ts';
import { BatchRecorder } from './record-batch.ts';

runActor<MetricsInit, MetricsCalls, MetricsEvent, MetricsTells>(async (init, ctx) => {
  const store = await openStore({ ...init.store, poolSize: 1 }, { log: ctx.log });
  const ring = new MetricsRing(ctx.clock.now());
  const names = new RouteNames();
  let failing = false;
  const endpoints = new SharedEndpoints(store, init.node, ring, store.driver === 'postgresql');

  const batches = new BatchRecorder(ring, names);
  const record = (told: readonly SampleBatch[]) => {
    for (const batch of told) batches.record(batch);
  };

  /** Every other node's latest summary and this node's own, summed at `now`. */
  const cluster = async (now = ctx.clock.now(), own: WireSnapshot = ring.snapshotForWire(now)) => {
    const others = await readOthers(store, init.node, now);
    return sumNodes([own, ...others], now);
  };

  const loop = every(ctx.clock, INTERVAL_MS, async () => {
    const now = ctx.clock.now();
    ring.tick(now);
    names.sweep(now);
    const own = ring.snapshotForWire(now);
    endpoints.collect();
    try {
      await writeOwn(store, init.node, now, own);
      await sweepNodes(store, now);
      await endpoints.write(now);
      // Summed at the tick's instant, as written: the interval sent is the one this tick closed.
      ctx.emit({ type: 'interval', metrics: await cluster(now, own) });
      if (failing) ctx.log.info('metrics: the other nodes\' summaries are read and written again');
      failing = false;
    } catch (err) {
      // The ring goes on in memory: this node's own numbers never wait on the database.
      if (!failing) ctx.log.warn('metrics: the summaries of the other nodes cannot be shared now; this node shows its own', errorAttrs(err));
      failing = true;
      ctx.emit({ type: 'interval', metrics: sumNodes([own], now) });
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
      'metrics.route': async ({ id }) => ({ route: id, period: PERIOD, ...(await endpoints.read(id, ctx.clock.now())) }),
      'routes.declared': ({ routes, ids }) => {
        names.declare(routes, ids);
        return null;
      },
    },
    stop: async () => {
      await loop.stop();
      await store.close();
    },
  };
});
