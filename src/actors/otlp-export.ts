/**
 * The wire side of OtlpPush (otlp-push.ts): turns a PushRecord into the logs SDK's record under
 * one resource and scope, and sends a batch of them over OTLP/HTTP as exactly one request, saying
 * whether the collector took it, refused it or could not be reached. The queue, the batches and
 * the retries are the push's.
 */
import { randomBytes } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Context } from '@opentelemetry/api';
import type { Logger, SeverityNumber } from '@opentelemetry/api-logs';
import type { LoggerProvider, LogRecordProcessor, ReadableLogRecord, SdkLogRecord } from '@opentelemetry/sdk-logs';
import type { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { traceIdOf, type PushRecord } from './otlp-record.ts';
import { loadPackage } from '../packages.ts';

let otel: {
  readonly api: typeof import('@opentelemetry/api');
  readonly apiLogs: typeof import('@opentelemetry/api-logs');
  readonly sdk: typeof import('@opentelemetry/sdk-logs');
  readonly exporter: typeof import('@opentelemetry/exporter-logs-otlp-http');
  readonly resources: typeof import('@opentelemetry/resources');
} | undefined;

/**
 * The OpenTelemetry packages, loaded by the first export made: the actors that push (the audit
 * trail, the logs) start without them while no collector is set, which spares each start about
 * 150 ms and their memory. Loaded with `require` (src/packages.ts says why).
 */
function packages(): NonNullable<typeof otel> {
  return (otel ??= {
    api: loadPackage('@opentelemetry/api'),
    apiLogs: loadPackage('@opentelemetry/api-logs'),
    sdk: loadPackage('@opentelemetry/sdk-logs'),
    exporter: loadPackage('@opentelemetry/exporter-logs-otlp-http'),
    resources: loadPackage('@opentelemetry/resources'),
  });
}

export type AttemptOutcome = 'sent' | 'refused' | 'unreachable';

export interface SendResult {
  readonly outcome: AttemptOutcome;
  /** The HTTP status, the socket's error code or the error's message; null once sent. */
  readonly reason: string | null;
}

export interface OtlpExportOptions {
  /** OTLP/HTTP base such as http://127.0.0.1:4318; `/v1/logs` is added unless already there. */
  readonly endpoint: string;
  /** A request with no answer for this long counts as a collector not answering (real time). */
  readonly timeoutMs: number;
  readonly resource: Readonly<Record<string, string>>;
  /** The instrumentation scope: the logger's name. */
  readonly scope: string;
}

/** ExportResultCode.SUCCESS of @opentelemetry/core, which we do not depend on directly. */
const EXPORT_SUCCESS = 0;
/** What the exporter says for a 429, 502, 503 or 504, whose status it does not pass on. */
const RETRYABLE_STATUS = 'Export failed with retryable status';

/** Hands each record back as it is emitted: the queue and the sending are the push's. */
class HandOver implements LogRecordProcessor {
  constructor(private readonly take: (record: SdkLogRecord) => void) {}
  onEmit(record: SdkLogRecord): void {
    this.take(record);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export class OtlpExport {
  /** False when the exporter kept its own retries (its shape changed): an attempt may then be several requests. */
  readonly oneRequestPerAttempt: boolean;
  private readonly exporter: OTLPLogExporter;
  private readonly provider: LoggerProvider;
  private readonly logger: Logger;
  private agent: HttpAgent | null = null;
  private emitted: SdkLogRecord | null = null;

  constructor(o: OtlpExportOptions) {
    const { exporter, sdk, resources } = packages();
    this.exporter = new exporter.OTLPLogExporter({
      url: logsUrl(o.endpoint),
      timeoutMillis: o.timeoutMs,
      // Our own agent, so that shutdown closes its kept-alive sockets.
      httpAgentOptions: (protocol) => (this.agent = protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true })),
    });
    this.oneRequestPerAttempt = withoutInternalRetries(this.exporter);
    this.provider = new sdk.LoggerProvider({
      resource: resources.resourceFromAttributes({ ...o.resource }),
      // An audited operation carries as many audit.field.* attributes as its rules name: keep them all.
      logRecordLimits: { attributeCountLimit: Number.MAX_SAFE_INTEGER, attributeValueLengthLimit: Infinity },
      processors: [new HandOver((record) => { this.emitted = record; })],
    });
    this.logger = this.provider.getLogger(o.scope);
  }

  /** The SDK's record for `r`, observed at `observedAt` (epoch ms); throws when none came out. */
  encode(r: PushRecord, observedAt: number): ReadableLogRecord {
    const traceId = traceIdOf(r.traceId);
    this.emitted = null;
    this.logger.emit({
      timestamp: r.timestamp,
      observedTimestamp: observedAt,
      severityNumber: (r.severityNumber ?? packages().apiLogs.SeverityNumber.INFO) as SeverityNumber,
      severityText: r.severityText ?? (r.severityNumber === undefined ? 'INFO' : undefined),
      body: r.body,
      attributes: r.attributes,
      context: traceId ? traceContext(traceId) : packages().api.ROOT_CONTEXT,
    });
    // The processor's onEmit ran synchronously inside emit() and set it.
    const record = this.emitted as SdkLogRecord | null;
    this.emitted = null;
    if (!record) throw new Error('the logger did not emit the record');
    return record;
  }

  /** One request with these records; never rejects. */
  send(records: readonly ReadableLogRecord[]): Promise<SendResult> {
    return new Promise((resolve) => {
      try {
        this.exporter.export([...records], (r) => resolve(classify(r)));
      } catch (err) {
        // The batch could not even be encoded: refused, so that it cannot hold the queue forever.
        resolve({ outcome: 'refused', reason: message(err) });
      }
    });
  }

  async shutdown(): Promise<void> {
    try {
      await this.provider.shutdown();
      await this.exporter.shutdown();
    } finally {
      this.agent?.destroy();
    }
  }
}

/**
 * The exporter answers FAILED with an OTLPExporterError for every HTTP answer other than 2xx
 * (a 429/502/503/504 loses its status on the way), and with the socket's own error when the
 * connection fails or times out: the first is a refusal, the second a collector not answering.
 */
function classify(r: { code: number; error?: Error }): SendResult {
  if (r.code === EXPORT_SUCCESS) return { outcome: 'sent', reason: null };
  const err = r.error;
  if (err?.name === 'OTLPExporterError') {
    const status = (err as Error & { code?: unknown }).code;
    if (typeof status === 'number') return { outcome: 'refused', reason: `HTTP ${status}` };
    return { outcome: 'refused', reason: err.message === RETRYABLE_STATUS ? 'HTTP 429, 502, 503 or 504' : err.message };
  }
  const code = (err as (Error & { code?: unknown }) | undefined)?.code;
  return { outcome: 'unreachable', reason: typeof code === 'string' ? code : err?.message ?? 'unknown' };
}

/**
 * OTLPLogExporter wraps its HTTP transport in one that, on 429/502/503/504 and on a refused,
 * reset or timed-out connection, sends the same request again up to five times on its own
 * timers (1 s growing 1.5x to 5 s, within timeoutMillis), then reports a failure without the
 * status. That would make one of our attempts several, outside the test clock: the inner
 * transport is put in its place, so that one attempt is one request. False when the exporter no
 * longer has that shape (a test pins it).
 */
export function withoutInternalRetries(exporter: OTLPLogExporter): boolean {
  type Transport = { send?: unknown; _transport?: Transport };
  const delegate = (exporter as unknown as { _delegate?: { _transport?: Transport } })._delegate;
  const outer = delegate?._transport;
  const inner = outer?._transport;
  if (!delegate || outer?.constructor?.name !== 'RetryingTransport' || typeof inner?.send !== 'function') return false;
  delegate._transport = inner;
  return true;
}

/** The request's trace id with a span id of the record's own, sampled: the log is a copy, never sampled out. */
function traceContext(traceId: string): Context {
  let spanId = randomBytes(8).toString('hex');
  while (/^0+$/.test(spanId)) spanId = randomBytes(8).toString('hex');
  const { trace, ROOT_CONTEXT, TraceFlags } = packages().api;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

export function logsUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith('/v1/logs')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/logs`;
  return url.toString();
}

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
