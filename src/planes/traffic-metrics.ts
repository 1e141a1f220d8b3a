/**
 * The traffic metrics' observer of the request record (spec 1.5): each data-plane exchange and
 * each scheduled call, once closed, becomes one record for the MetricsRing's one-way queue. The
 * health probes are never counted, nor the control and internal planes' own APIs. The path goes
 * to the actor only to be named there: no label is ever a raw path, a user or an address.
 */
import { outcomeOf, type RecordObserver } from '../pipeline/request-record.ts';
import type { GatewayContext } from './context.ts';

/** A health probe's path: compared, not looked up, so that a request's path is not hashed for it. */
function isProbe(path: string): boolean {
  return (path.length === 8 && path === '/healthz') || (path.length === 7 && path === '/readyz');
}

export function trafficMetrics(gw: GatewayContext): RecordObserver {
  const on = gw.settings.metrics;
  const clock = gw.clock;
  return {
    listening: () => on,
    closed(r) {
      const head = r.head;
      if (r.schedule === null && (head.plane !== 'data' || isProbe(head.path))) return;
      // The end on the gateway's clock, not the receipt plus the time taken: under the test clock
      // an exchange ends at the clock's own time, in the interval the clock stands in.
      gw.metrics.record(r.route?.id ?? null, head.method, r.servicePath, outcomeOf(r), Math.max(1, Math.round((r.end - r.start) * 1000)), clock.at(r.end));
    },
  };
}
