/**
 * What one audit event becomes on its way to the collector (spec 1.3 rule 11, 2.6): the body,
 * the time, the flat attributes and the trace id of an OpenTelemetry log record, at INFO. Pure,
 * so the mapping is tested without a network; the push (push.ts) hands the result to the logs SDK.
 */
import type { AuditRow } from '../../store/audit.ts';
import { attributeValue, jsonText, traceIdOf, type PushAttribute, type PushRecord } from '../otlp-record.ts';

/** Keys the gateway writes from the row's own columns; an operation's attributes cannot replace them. */
const RESERVED_PREFIX = 'gateway.audit.';

/** The body is the action; for an operation event, its description (the row's detail) when it has one. */
export function recordOf(row: AuditRow): PushRecord {
  const attributes: Record<string, PushAttribute> = {};
  const column = (key: string, value: string | null) => {
    if (value != null) attributes[key] = value;
  };
  // We store the account's name only, so both user fields carry it; an operation event's own
  // user.id (an id, spec 2.6) replaces it below.
  column('user.id', row.actorAccount);
  column('user.name', row.actorAccount);
  column('gateway.token', row.actorToken);
  column('gateway.target.kind', row.targetKind);
  column('gateway.target.id', row.targetId);
  column('gateway.target.name', row.targetName);
  column('gateway.organisation', row.organisation);
  column('client.address', row.address);
  column('gateway.audit.part', row.part);
  column('gateway.audit.action', row.action);
  column('gateway.audit.id', row.id);
  if (row.changes != null) {
    column('gateway.audit.changes', typeof row.changes === 'string' ? row.changes : jsonText(row.changes));
  }
  column('gateway.audit.detail', row.detail);

  if (isPlainObject(row.attributes)) {
    for (const [key, value] of Object.entries(row.attributes)) {
      if (key === '' || key.startsWith(RESERVED_PREFIX)) continue;
      const v = attributeValue(value);
      if (v !== undefined) attributes[key] = v;
    }
  }

  return {
    body: row.part === 'operations' && row.detail ? row.detail : row.action,
    timestamp: row.at,
    attributes,
    traceId: traceIdOf(row.traceId),
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
