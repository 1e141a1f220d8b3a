/**
 * What one audit event becomes on its way to the collector (spec 1.3 rule 11, 2.6): the body,
 * the time, the flat attributes and the trace id of an OpenTelemetry log record. Pure, so the
 * mapping is tested without a network; push.ts hands the result to the logs SDK.
 */
import type { AuditRow } from '../../store/audit.ts';

export type PushAttribute = string | number | boolean;

export interface PushRecord {
  /** The action; for an operation event, its description (the row's detail) when it has one. */
  readonly body: string;
  /** Epoch ms: when the event happened, not when it was sent. */
  readonly timestamp: number;
  readonly attributes: Readonly<Record<string, PushAttribute>>;
  /** 32 lower-case hex digits, never all zeros, or null. */
  readonly traceId: string | null;
}

/** Keys the gateway writes from the row's own columns; an operation's attributes cannot replace them. */
const RESERVED_PREFIX = 'gateway.audit.';

const TRACE_ID = /^[0-9a-f]{32}$/;

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

  const trace = row.traceId?.toLowerCase() ?? '';
  return {
    body: row.part === 'operations' && row.detail ? row.detail : row.action,
    timestamp: row.at,
    attributes,
    traceId: TRACE_ID.test(trace) && !/^0+$/.test(trace) ? trace : null,
  };
}

/** OTLP attribute values stay flat: lists and objects travel as their JSON text. */
function attributeValue(value: unknown): PushAttribute | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString();
    case 'object':
      return value === null ? undefined : jsonText(value);
    default:
      return undefined;
  }
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    // A row read back from the database is JSON already; this only guards hand-made rows.
    return String(value);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
