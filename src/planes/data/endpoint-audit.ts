/**
 * Endpoint audit, the first observer of the request record (spec 1.3 rule 12): a call of an
 * audited operation becomes one line of the trail. It observes only: it sees the answer the
 * caller got (the gateway's own refusals included), asks for a copy of the body's first 64 KB
 * when the operation keeps the body, and hands what it saw to the recorder's one-way queue once
 * the answer ended; the AuditBatcher makes the line (fields, body parsed and masked) on its own
 * thread. It never changes, delays or refuses a call. Licensed edition only: on the community
 * edition it never listens, so no record is opened for it.
 */
import { slashesDecoded } from '../../http/canonical-path.ts';
import { BODY_MAX_BYTES } from '../../core/audit/mask.ts';
import { headerRecord } from '../../http/header-record.ts';
import type { AuditedOperation, CallBody, OperationMatch } from '../../core/audit/operations.ts';
import { isLicensed } from '../edition.ts';
import type { RecordObserver, RequestRecord } from '../../pipeline/request-record.ts';
import type { GatewayContext } from '../context.ts';
import { clientAddress } from '../forwarded.ts';
import { traceIdOf } from '../principal.ts';

const NO_BYTES = new Uint8Array(0);

/**
 * The kept bytes in a buffer of their own: a call crosses to the actor by structured clone, which
 * copies a view's whole underlying buffer (a pooled slab, a read window), not the view alone.
 */
function ownBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const only = chunks.length === 1 ? chunks[0]! : undefined;
  if (only !== undefined && only.byteOffset === 0 && only.byteLength === only.buffer.byteLength) return only;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

export function keptBody(record: RequestRecord): CallBody | undefined {
  // Never asked for: the call was refused before the pipeline let it through.
  if (record.bodyLimit === 0) return undefined;
  const body = record.body;
  if (body === null) return { bytes: NO_BYTES, size: 0, complete: true };
  return {
    bytes: body.chunks === null ? null : ownBytes(body.chunks, body.size),
    size: body.size,
    complete: body.complete,
  };
}

/**
 * The request headers the line reads: the body's type (when the body is read) and the headers
 * the operation's fields name. Only those cross to the actor.
 */
export function neededHeaders(operation: AuditedOperation, headers: Readonly<Record<string, string>>): Record<string, string> {
  const out = headerRecord();
  const type = headers['content-type'];
  if (operation.wantsBody && type !== undefined) out['content-type'] = type;
  for (const { source } of operation.fields) {
    if (source.kind !== 'header') continue;
    const value = headers[source.name];
    if (value !== undefined) out[source.name] = value;
  }
  return out;
}

export function endpointAudit(gw: GatewayContext): RecordObserver {
  const licensed = isLicensed(gw.settings);
  const view = gw.config.view;
  const find = (record: RequestRecord): OperationMatch | undefined => {
    // A scheduled call is the gateway's own: its runs keep their history, the trail its changes.
    if (record.route === null || record.servicePath === null || record.schedule !== null) return undefined;
    const audits = view.operationAudits.get(record.route.id);
    if (audits === undefined) return undefined;
    // A service that decodes %2F reads `/orders%2F7/lines` as `/orders/7/lines`: the call it
    // serves is audited under that reading too, or an escaped slash would keep it out of the trail.
    const found = audits.match(record.head.method, record.servicePath);
    if (found !== undefined) return found;
    const decoded = slashesDecoded(record.servicePath);
    return decoded === undefined ? undefined : audits.match(record.head.method, decoded);
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
      gw.audit.recordCall({
        at: gw.clock.now(),
        routeId: route.id,
        match,
        method: head.method,
        path: head.path,
        query: head.query,
        headers: neededHeaders(match.operation, head.headers),
        status: record.status,
        aborted: record.outcome === 'aborted',
        address: record.client ?? clientAddress(gw.certs.view, head),
        traceId: traceIdOf(head),
        user: identity === null ? null : { id: identity.id ?? null, name: identity.user, token: identity.token ?? null, roles: identity.roles },
        tenant: tenantId === null ? null : { id: tenantId, name: view.organisations.get(tenantId)?.name ?? tenantId },
        // The gateway has no groups of accounts yet: the attribute is left out.
        group: null,
        body: keptBody(record),
      });
    },
  };
}
