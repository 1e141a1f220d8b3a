/**
 * The collector push of the logs (spec 1.4 rule 5, licensed edition): operational and access
 * records as OpenTelemetry log records over OTLP/HTTP, with a queue of their own, separate from
 * the audit trail's. The queue, the batches and the retries are OtlpPush's; a batch the collector
 * refuses three times is dropped and counted, and the settings answer says how many.
 */
import type { Clock } from '../../clock/clock.ts';
import type { AccessEntry } from '../../log/access.ts';
import { accessBody, accessFields, SEVERITY_NUMBER, traceOf } from '../../log/format.ts';
import type { LogRecord } from '../../log/record.ts';
import { OtlpPush, type PushReport } from '../otlp-push.ts';
import { attributeValue, type PushAttribute, type PushRecord } from '../otlp-record.ts';

type Stream = 'app' | 'access';
type Item = { readonly app: LogRecord } | { readonly access: AccessEntry };

export interface LogPushOptions {
  readonly endpoint: string;
  readonly node: string;
  readonly version: string;
  readonly clock: Clock;
  readonly onReport: PushReport;
}

export interface LogPush {
  app(records: readonly LogRecord[]): void;
  access(entries: readonly AccessEntry[]): void;
  dropped(): Record<Stream, number>;
  droppedBatches(): number;
  queued(): number;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export function appPushRecord(r: LogRecord): PushRecord {
  const attributes: Record<string, PushAttribute> = {};
  for (const [k, v] of Object.entries(r.attrs)) {
    const value = attributeValue(v);
    if (value !== undefined) attributes[k] = value;
  }
  attributes.type = 'app';
  return {
    body: r.msg, timestamp: Date.parse(r.time), attributes, traceId: traceOf(r.attrs.traceId),
    severityNumber: SEVERITY_NUMBER[r.level], severityText: r.level.toUpperCase(),
  };
}

export function accessPushRecord(e: AccessEntry): PushRecord {
  const { time: _time, trace_id: _trace, ...attributes } = accessFields(e);
  return { body: accessBody(e), timestamp: e.at, attributes, traceId: e.traceId, severityNumber: SEVERITY_NUMBER.info, severityText: 'INFO' };
}

export function logPush(o: LogPushOptions): LogPush {
  let batches = 0;
  const push = new OtlpPush<Item, Stream>({
    endpoint: o.endpoint,
    clock: o.clock,
    // Access records come by the tens of thousands a second at full load: room for a few seconds of them.
    capacity: 50_000,
    batch: 1_000,
    what: 'log',
    resource: { 'service.name': 'meerkat', 'service.version': o.version, 'service.instance.id': o.node },
    scope: 'meerkat.logs',
    streams: ['app', 'access'],
    streamOf: (item) => ('app' in item ? 'app' : 'access'),
    toRecord: (item) => ('app' in item ? appPushRecord(item.app) : accessPushRecord(item.access)),
    onReport: o.onReport,
    onAttempt: (a) => { if (a.dropped) batches += 1; },
  });
  return {
    app: (records) => push.push(records.map((app) => ({ app }))),
    access: (entries) => push.push(entries.map((access) => ({ access }))),
    dropped: () => push.dropped(),
    droppedBatches: () => batches,
    queued: () => push.queued(),
    flush: () => push.flush(),
    shutdown: () => push.shutdown(),
  };
}
