/**
 * The collector push of the audit trail (spec 1.3 rule 11; 8 "Collector push batch"). It runs in
 * the AuditBatcher's worker once events are stored: each event is copied, never sampled, into an
 * OpenTelemetry log record (push-record.ts) and sent over OTLP/HTTP in batches (docs/audit.md
 * "Collector push"). The queue, the batches and the retries are OtlpPush's; this names what the
 * trail sends and under which resource, with a drop count for each of its two streams.
 */
import type { AuditRow } from '../../store/audit.ts';
import { OtlpPush, type OtlpPushBaseOptions } from '../otlp-push.ts';
import { recordOf } from './push-record.ts';
import { streamOf, type AuditStream } from './messages.ts';

export type AuditPush = OtlpPush<AuditRow, AuditStream>;

export interface AuditPushOptions extends OtlpPushBaseOptions {
  /** The resource's service.instance.id. */
  node: string;
}

const STREAMS: readonly AuditStream[] = ['audit', 'console'];

export function auditPush(o: AuditPushOptions): AuditPush {
  const { node, ...base } = o;
  return new OtlpPush<AuditRow, AuditStream>({
    ...base,
    what: 'audit',
    resource: { 'gateway.stream': 'audit', 'service.name': 'meerkat', 'service.instance.id': node },
    scope: 'meerkat.audit',
    streams: STREAMS,
    streamOf,
    toRecord: recordOf,
    idOf: (row) => row?.id,
  });
}
