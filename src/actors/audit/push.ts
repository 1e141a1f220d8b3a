/**
 * The collector push of the audit trail (spec 1.3 rule 11; 8 "Collector push batch"). It runs in
 * the AuditBatcher's worker once events are stored: each event is copied, never sampled, into an
 * OpenTelemetry log record and sent over OTLP/HTTP in batches (docs/audit.md "Collector push").
 *
 * The SDK's batch processor drops silently and gives up after five attempts, so the queue, the
 * batches and the retries are ours: a collector that does not answer is waited for as long as the
 * queue has room; a batch the collector refuses three times is dropped and counted.
 */
import { randomBytes } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { ROOT_CONTEXT, TraceFlags, trace, type Context } from '@opentelemetry/api';
import { SeverityNumber, type Logger } from '@opentelemetry/api-logs';
import { LoggerProvider, type LogRecordProcessor, type ReadableLogRecord, type SdkLogRecord } from '@opentelemetry/sdk-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { AuditRow } from '../../store/audit.ts';
import type { Clock, Timer } from '../../clock/clock.ts';
import { recordOf } from './push-record.ts';
import { streamOf, type AuditStream } from './messages.ts';


export type AttemptOutcome = 'sent' | 'refused' | 'unreachable';

/** One export attempt, as `onAttempt` sees it once the collector answered or failed to. */
export interface PushAttempt {
  readonly outcome: AttemptOutcome;
  readonly events: number;
  /** Refusals of this batch so far; the third drops it. */
  readonly refusals: number;
  readonly dropped: boolean;
  /** Clock ms until the next attempt, when a failure set one. */
  readonly retryInMs: number | null;
  /** The HTTP status, the socket's error code or the error's message. */
  readonly reason: string | null;
}

export interface AuditPushOptions {
  /** OTLP/HTTP base such as http://127.0.0.1:4318; `/v1/logs` is added unless already there. */
  endpoint: string;
  /** The resource's service.instance.id. */
  node: string;
  /** Every delay (batch interval, retry backoff) is taken on this clock. */
  clock: Clock;
  /** Events queued at most, the batch being sent included (default 10,000). */
  capacity?: number;
  /** Events per export (default 512). */
  batch?: number;
  /** Wait before sending a partial batch (default 1,000 ms). */
  intervalMs?: number;
  /** A request with no answer for this long counts as a collector not answering (default 10,000 ms, real time). */
  timeoutMs?: number;
  onReport?: (level: 'info' | 'warn', msg: string, attrs: Record<string, unknown>) => void;
  onAttempt?: (attempt: PushAttempt) => void;
}

const REFUSALS_TO_DROP = 3;
const BACKOFF_FIRST_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;
/** ExportResultCode.SUCCESS of @opentelemetry/core, which we do not depend on directly. */
const EXPORT_SUCCESS = 0;
/** What the exporter says for a 429, 502, 503 or 504, whose status it does not pass on. */
const RETRYABLE_STATUS = 'Export failed with retryable status';

interface Entry {
  readonly seq: number;
  readonly stream: AuditStream;
  readonly record: ReadableLogRecord;
}

interface Batch {
  readonly entries: readonly Entry[];
  refusals: number;
}

interface Result {
  readonly outcome: AttemptOutcome;
  readonly reason: string | null;
}

type Counts = { audit: number; console: number };

/** Hands each record to the push as it is emitted: the queue and the sending are the push's. */
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

export class AuditPush {
  private readonly clock: Clock;
  private readonly capacity: number;
  private readonly batchSize: number;
  private readonly intervalMs: number;
  private readonly onAttempt: ((a: PushAttempt) => void) | undefined;
  private readonly onReport: AuditPushOptions['onReport'];
  private readonly exporter: OTLPLogExporter;
  private readonly provider: LoggerProvider;
  private readonly logger: Logger;
  private agent: HttpAgent | null = null;

  private queue: Entry[] = [];
  /** The batch being sent, or waiting out a backoff to be sent again. */
  private current: Batch | null = null;
  private sending: Promise<AttemptOutcome | null> | null = null;
  private timer: Timer | null = null;
  /** The timer waits out a backoff, not the batch interval: nothing leaves before it fires. */
  private backingOff = false;
  /** Failed attempts since the last success: the backoff doubles with each. */
  private failures = 0;
  private seq = 0;
  /** Every entry up to this sequence number has left the queue, sent or dropped. */
  private leftSeq = 0;
  private emitted: SdkLogRecord | null = null;
  private readonly drops: Counts = { audit: 0, console: 0 };
  /** Drops by a full queue since it became full; null while it has room. */
  private fullDrops: Counts | null = null;
  private closed = false;
  private stopping: Promise<void> | null = null;

  constructor(o: AuditPushOptions) {
    this.clock = o.clock;
    this.capacity = positive(o.capacity, 10_000);
    this.batchSize = positive(o.batch, 512);
    this.intervalMs = positive(o.intervalMs, 1_000);
    this.onAttempt = o.onAttempt;
    this.onReport = o.onReport;
    this.exporter = new OTLPLogExporter({
      url: logsUrl(o.endpoint),
      timeoutMillis: positive(o.timeoutMs, 10_000),
      // Our own agent, so that shutdown closes its kept-alive sockets.
      httpAgentOptions: (protocol) => (this.agent = protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true })),
    });
    if (!withoutInternalRetries(this.exporter)) {
      this.report('warn', 'audit push: the exporter keeps its own retries; an attempt may send a batch up to six times', {});
    }
    this.provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'gateway.stream': 'audit', 'service.name': 'meerkat', 'service.instance.id': o.node }),
      // An operation event carries as many audit.field.* attributes as its rules name: keep them all.
      logRecordLimits: { attributeCountLimit: Number.MAX_SAFE_INTEGER, attributeValueLengthLimit: Infinity },
      processors: [new HandOver((record) => { this.emitted = record; })],
    });
    this.logger = this.provider.getLogger('meerkat.audit');
  }

  push(rows: readonly AuditRow[]): void {
    for (const row of rows) {
      try {
        this.take(row);
      } catch (err) {
        this.count(this.drops, safeStream(row));
        this.report('warn', 'audit push: an event could not be made into a log record, dropped', { id: row?.id, error: message(err) });
      }
    }
    this.kick();
  }

  dropped(): { audit: number; console: number } {
    return { ...this.drops };
  }

  queued(): number {
    return this.queue.length + (this.current?.entries.length ?? 0);
  }

  /**
   * Sends what is queued now, batch after batch, without waiting for the interval or a backoff.
   * Each batch is tried once: the first failure ends the flush and the loop's backoff resumes.
   */
  async flush(): Promise<void> {
    const target = this.seq;
    while (this.leftSeq < target) {
      const outcome = this.sending ? await this.sending : await this.attempt();
      if (outcome !== 'sent') return;
    }
  }

  /** Flushes once more, then stops; events still queued are counted as dropped. */
  shutdown(): Promise<void> {
    this.stopping ??= this.stop();
    return this.stopping;
  }

  private async stop(): Promise<void> {
    this.closed = true;
    this.cancelTimer();
    try {
      await this.flush();
      if (this.sending) await this.sending;
    } catch (err) {
      this.report('warn', 'audit push: the last flush failed', { error: message(err) });
    }
    const left = [...(this.current?.entries ?? []), ...this.queue];
    this.current = null;
    this.queue = [];
    if (left.length > 0) {
      const counts = this.countAll(left);
      this.report('warn', 'audit push: events not sent at stop were dropped', { events: left.length, ...counts });
    }
    try {
      await this.provider.shutdown();
      await this.exporter.shutdown();
    } catch (err) {
      this.report('warn', 'audit push: the exporter did not stop cleanly', { error: message(err) });
    }
    this.agent?.destroy();
  }

  private take(row: AuditRow): void {
    const stream = streamOf(row);
    if (this.closed) {
      this.count(this.drops, stream);
      return;
    }
    if (this.queued() >= this.capacity) {
      this.count(this.drops, stream);
      if (!this.fullDrops) {
        this.fullDrops = { audit: 0, console: 0 };
        this.report('warn', 'audit push: the queue is full, new events are dropped', { capacity: this.capacity });
      }
      this.count(this.fullDrops, stream);
      return;
    }
    if (this.fullDrops) {
      this.report('info', 'audit push: the queue has room again', { dropped: this.fullDrops.audit + this.fullDrops.console, ...this.fullDrops });
      this.fullDrops = null;
    }
    const record = this.emit(row);
    if (!record) throw new Error('the logger did not emit the record');
    this.queue.push({ seq: ++this.seq, stream, record });
  }

  private emit(row: AuditRow): SdkLogRecord | null {
    const r = recordOf(row);
    this.emitted = null;
    this.logger.emit({
      timestamp: r.timestamp,
      observedTimestamp: this.clock.now(),
      severityNumber: SeverityNumber.INFO,
      severityText: 'INFO',
      body: r.body,
      attributes: r.attributes,
      context: r.traceId ? traceContext(r.traceId) : ROOT_CONTEXT,
    });
    // The processor's onEmit ran synchronously inside emit() and set it.
    const record = this.emitted as SdkLogRecord | null;
    this.emitted = null;
    return record;
  }

  /** Starts the next attempt when one is due: at once for a full batch, after the interval otherwise. */
  private kick(): void {
    if (this.closed || this.sending || this.backingOff) return;
    if (this.current || this.queue.length >= this.batchSize) void this.attempt();
    else if (this.queue.length > 0 && !this.timer) this.arm(this.intervalMs, false);
  }

  private arm(ms: number, backoff: boolean): void {
    this.cancelTimer();
    this.backingOff = backoff;
    this.timer = this.clock.after(ms, () => {
      this.timer = null;
      this.backingOff = false;
      void this.attempt();
    });
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = null;
    this.backingOff = false;
  }

  /** One export of the current batch (or the next one); resolves once it has been settled. */
  private attempt(): Promise<AttemptOutcome | null> {
    if (this.sending) return this.sending;
    this.cancelTimer();
    const batch = this.current ?? this.nextBatch();
    if (!batch) return Promise.resolve(null);
    this.current = batch;
    const run = async (): Promise<AttemptOutcome | null> => {
      const result = await this.send(batch);
      this.sending = null;
      return this.settle(batch, result);
    };
    this.sending = run().catch((err: unknown) => {
      this.sending = null;
      this.report('warn', 'audit push: an attempt failed unexpectedly', { error: message(err) });
      return null;
    });
    return this.sending;
  }

  private nextBatch(): Batch | null {
    if (this.queue.length === 0) return null;
    return { entries: this.queue.splice(0, this.batchSize), refusals: 0 };
  }

  private send(batch: Batch): Promise<Result> {
    return new Promise((resolve) => {
      try {
        this.exporter.export(batch.entries.map((e) => e.record), (r) => resolve(classify(r)));
      } catch (err) {
        // The batch could not even be encoded: refused, so that it cannot hold the queue forever.
        resolve({ outcome: 'refused', reason: message(err) });
      }
    });
  }

  private settle(batch: Batch, result: Result): AttemptOutcome {
    let dropped = false;
    let retryInMs: number | null = null;
    if (result.outcome === 'sent') {
      this.leave(batch);
      if (this.failures > 0) this.report('info', 'audit push: the collector takes events again', { failedAttempts: this.failures });
      this.failures = 0;
    } else {
      if (this.failures === 0) {
        this.report('warn', 'audit push: the collector does not take events; they wait in the queue', { outcome: result.outcome, reason: result.reason });
      }
      this.failures += 1;
      if (result.outcome === 'refused') batch.refusals += 1;
      if (batch.refusals >= REFUSALS_TO_DROP) {
        dropped = true;
        this.leave(batch);
        const counts = this.countAll(batch.entries);
        this.report('warn', 'audit push: a batch refused three times was dropped', { events: batch.entries.length, ...counts, reason: result.reason });
      }
      retryInMs = Math.min(BACKOFF_FIRST_MS * 2 ** (this.failures - 1), BACKOFF_MAX_MS);
      if (!this.closed) this.arm(retryInMs, true);
    }
    if (result.outcome === 'sent') this.kick();
    try {
      this.onAttempt?.({ outcome: result.outcome, events: batch.entries.length, refusals: batch.refusals, dropped, retryInMs, reason: result.reason });
    } catch {
      // An observer's failure is its own.
    }
    return result.outcome;
  }

  private leave(batch: Batch): void {
    this.current = null;
    const last = batch.entries[batch.entries.length - 1];
    if (last) this.leftSeq = Math.max(this.leftSeq, last.seq);
  }

  private countAll(entries: readonly Entry[]): Counts {
    const counts: Counts = { audit: 0, console: 0 };
    for (const e of entries) {
      this.count(this.drops, e.stream);
      this.count(counts, e.stream);
    }
    return counts;
  }

  private count(counts: Counts, stream: AuditStream): void {
    counts[stream] += 1;
  }

  private report(level: 'info' | 'warn', msg: string, attrs: Record<string, unknown>): void {
    try {
      this.onReport?.(level, msg, attrs);
    } catch {
      // Reporting never breaks the push.
    }
  }
}

/**
 * The exporter answers FAILED with an OTLPExporterError for every HTTP answer other than 2xx
 * (a 429/502/503/504 loses its status on the way), and with the socket's own error when the
 * connection fails or times out: the first is a refusal, the second a collector not answering.
 */
function classify(r: { code: number; error?: Error }): Result {
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
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

export function logsUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith('/v1/logs')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/logs`;
  return url.toString();
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
}

function safeStream(row: AuditRow): AuditStream {
  try {
    return streamOf(row);
  } catch {
    return 'audit';
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
