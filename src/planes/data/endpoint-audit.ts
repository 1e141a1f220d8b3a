/**
 * Endpoint audit, the first observer of the request record (spec 1.3 rule 12): a call of an
 * audited operation becomes one line of the trail. It observes only: it sees the answer the
 * caller got (the gateway's own refusals included), asks for a copy of the body's first 64 KB
 * when the operation keeps the body, and hands the line to the recorder's one-way queue once the
 * answer ended. It never changes, delays or refuses a call. Licensed edition only: on the
 * community edition it never listens, so no record is opened for it.
 */
import { BODY_MAX_BYTES } from '../../core/audit/mask.ts';
import { operationEntry, type CallBody, type OperationMatch } from '../../core/audit/operations.ts';
import { isLicensed } from '../edition.ts';
import type { RecordObserver, RequestRecord } from '../../pipeline/request-record.ts';
import type { GatewayContext } from '../context.ts';
import { traceIdOf } from '../principal.ts';

const NO_BYTES = new Uint8Array(0);

function keptBody(record: RequestRecord): CallBody | undefined {
  // Never asked for: the call was refused before the pipeline let it through.
  if (record.bodyLimit === 0) return undefined;
  const body = record.body;
  if (body === null) return { bytes: NO_BYTES, size: 0, complete: true };
  return {
    bytes: body.chunks === null ? null : body.chunks.length === 1 ? body.chunks[0]! : Buffer.concat(body.chunks),
    size: body.size,
    complete: body.complete,
  };
}

export function endpointAudit(gw: GatewayContext): RecordObserver {
  const licensed = isLicensed(gw.settings);
  const view = gw.config.view;
  const find = (record: RequestRecord): OperationMatch | undefined => {
    // A scheduled call is the gateway's own: its runs keep their history, the trail its changes.
    if (record.route === null || record.servicePath === null || record.schedule !== null) return undefined;
    return view.operationAudits.get(record.route.id)?.match(record.head.method, record.servicePath);
  };
  // The match found when the call passed serves its close; a refused call is matched at close.
  const matched = new WeakMap<RequestRecord, OperationMatch>();

  return {
    listening: () => licensed && view.operationAudits.size > 0,

    passed(record) {
      const match = find(record);
      if (match === undefined) return;
      matched.set(record, match);
      record.template = match.operation.template;
      if (match.operation.wantsBody) record.bodyLimit = BODY_MAX_BYTES;
    },

    closed(record) {
      const match = matched.get(record) ?? find(record);
      if (match === undefined) return;
      const route = record.route!;
      const identity = record.identity;
      // The caller's organisation; a call nobody authenticated belongs to the route's, if any.
      const tenantId = identity?.organisation ?? route.organisation;
      const head = record.head;
      gw.audit.record(operationEntry({
        at: gw.clock.now(),
        routeId: route.id,
        match,
        method: head.method,
        path: head.path,
        query: head.query,
        headers: head.headers,
        status: record.status,
        aborted: record.outcome === 'aborted',
        address: head.remoteAddress,
        traceId: traceIdOf(head),
        user: identity === null ? null : { id: identity.id ?? null, name: identity.user, token: identity.token ?? null, roles: identity.roles },
        tenant: tenantId === null ? null : { id: tenantId, name: view.organisations.get(tenantId)?.name ?? tenantId },
        // The gateway has no groups of accounts yet: the attribute is left out.
        group: null,
        body: keptBody(record),
      }));
    },
  };
}
