/**
 * The access log (spec 1.4 rules 1 and 4, 2.7): an observer of the request record. While the
 * switch is on, each closed record becomes one AccessEntry handed to the LogShipper's one-way
 * queue; formatting and writing happen there. Never a body; the path without its query string.
 */
import { endpointLabel } from '../core/routes/endpoints.ts';
import { outcomeOf, type RecordObserver, type RequestRecord } from '../pipeline/request-record.ts';
import type { AccessEntry } from '../log/access.ts';
import type { GatewayContext } from './context.ts';
import { clientAddress } from './forwarded.ts';
import { traceIdOf } from './principal.ts';

function endpointOf(gw: GatewayContext, r: RequestRecord): string | null {
  if (r.template !== null) return `${r.head.method} ${r.template}`;
  if (r.route === null || r.servicePath === null) return null;
  return endpointLabel(r.head.method, gw.config.view.endpoints.get(r.route.id), r.servicePath);
}

function ipOf(gw: GatewayContext, r: RequestRecord): string | null {
  const head = r.head;
  if (r.schedule !== null) return null;
  // The data plane resolved it already; the others resolve it here.
  return r.client ?? clientAddress(gw.certs.view, head);
}

export function accessEntry(gw: GatewayContext, r: RequestRecord): AccessEntry {
  const head = r.head;
  return {
    at: head.receivedAt,
    plane: head.plane,
    method: head.method,
    path: head.path,
    endpoint: endpointOf(gw, r),
    route: r.route?.id ?? null,
    status: r.status,
    ms: Math.max(0, Math.round(r.end - r.start)),
    outcome: outcomeOf(r),
    user: r.identity?.user ?? r.user,
    token: r.identity?.token ?? r.token,
    ip: ipOf(gw, r),
    traceId: traceIdOf(head),
    schedule: r.schedule,
  };
}

export function accessLog(gw: GatewayContext): RecordObserver {
  return {
    listening: () => gw.logs.accessOn,
    closed(record) {
      gw.logs.access(accessEntry(gw, record));
    },
  };
}
