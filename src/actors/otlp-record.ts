/**
 * What a line of the gateway becomes on its way to an OpenTelemetry collector: the body, the time,
 * the severity, flat attributes and a trace id. Each stream maps its own items to this (the audit
 * trail in audit/push-record.ts); OtlpPush (otlp-push.ts) hands it to the logs SDK. Pure.
 */

export type PushAttribute = string | number | boolean;

export interface PushRecord {
  readonly body: string;
  /** Epoch ms: when the line happened, not when it was sent. */
  readonly timestamp: number;
  readonly attributes: Readonly<Record<string, PushAttribute>>;
  /** 32 lower-case hex digits, never all zeros, or null (see traceIdOf). */
  readonly traceId: string | null;
  /** OpenTelemetry's SeverityNumber, 1 (TRACE) to 24 (FATAL4); INFO (9) when absent. */
  readonly severityNumber?: number;
  /** As the source names its level; 'INFO' when both it and the number are absent. */
  readonly severityText?: string;
}

const TRACE_ID = /^[0-9a-f]{32}$/;

/** A trace id as OTLP carries it (lower-case), or null when it is not a well-formed, non-zero one. */
export function traceIdOf(value: string | null | undefined): string | null {
  const trace = value?.toLowerCase() ?? '';
  return TRACE_ID.test(trace) && !/^0+$/.test(trace) ? trace : null;
}

/** OTLP attribute values stay flat: lists and objects travel as their JSON text; null and functions are left out. */
export function attributeValue(value: unknown): PushAttribute | undefined {
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

export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    // A row read back from the database is JSON already; this only guards hand-made values.
    return String(value);
  }
}
