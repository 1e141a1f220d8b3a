/**
 * A push of the gateway's lines to an OpenTelemetry collector over OTLP/HTTP, in batches (spec
 * 8 "Collector push batch"; docs/audit.md "Collector push"). The audit trail (audit/push.ts) and
 * the log shipper each build one with their resource, scope, streams and record mapping; the
 * policy below is the same for both.
 *
 * The SDK's batch processor drops silently and gives up after five attempts, so the queue, the
 * batches and the retries are ours: a collector that does not answer is waited for as long as the
 * queue has room; a batch the collector refuses three times is dropped and counted, per stream.
 */
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { Clock, Timer } from '../clock/clock.ts';
import type { PushRecord } from './otlp-record.ts';
import { OtlpExport, message, type AttemptOutcome, type SendResult } from './otlp-export.ts';

export { logsUrl, withoutInternalRetries, type AttemptOutcome } from './otlp-export.ts';

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

export type PushReport = (level: 'info' | 'warn', msg: string, attrs: Record<string, unknown>) => void;

/** What every push is given, whatever it sends. */
export interface OtlpPushBaseOptions {
  /** OTLP/HTTP base such as http://127.0.0.1:4318; `/v1/logs` is added unless already there. */
  endpoint: string;
  /** Every delay (batch interval, retry backoff) is taken on this clock. */
  clock: Clock;
  /** Items queued at most, the batch being sent included (default 10,000). */
  capacity?: number;
  /** Items per export (default 512). */
  batch?: number;
  /** Wait before sending a partial batch (default 1,000 ms). */
  intervalMs?: number;
  /** A request with no answer for this long counts as a collector not answering (default 10,000 ms, real time). */
  timeoutMs?: number;
  onReport?: PushReport;
  onAttempt?: (attempt: PushAttempt) => void;
}

export interface OtlpPushOptions<Item, Stream extends string> extends OtlpPushBaseOptions {
  /** Names the push in its reports: `${what} push: ...` ('audit', 'log'). */
  what: string;
  /** The resource's attributes, such as service.name and service.instance.id. */
  resource: Record<string, string>;
  /** The instrumentation scope: the logger's name. */
  scope: string;
  /** Every stream drops are counted in (at least one); the first also takes an item whose stream cannot be told. */
  streams: readonly Stream[];
  streamOf(item: Item): Stream;
  toRecord(item: Item): PushRecord;
  /** Names an item in the report of one that could not be made into a record. */
  idOf?(item: Item): unknown;
}

const REFUSALS_TO_DROP = 3;
const BACKOFF_FIRST_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

interface Entry<Stream> {
  readonly seq: number;
  readonly stream: Stream;
  readonly record: ReadableLogRecord;
}

interface Batch<Stream> {
  readonly entries: readonly Entry<Stream>[];
  refusals: number;
}

export class OtlpPush<Item, Stream extends string> {
  private readonly o: OtlpPushOptions<Item, Stream>;
  private readonly clock: Clock;
  private readonly capacity: number;
  private readonly batchSize: number;
  private readonly intervalMs: number;
  private readonly prefix: string;
  private readonly known: ReadonlySet<string>;
  private readonly firstStream: Stream;
  private readonly exporter: OtlpExport;

  private queue: Entry<Stream>[] = [];
  /** The batch being sent, or waiting out a backoff to be sent again. */
  private current: Batch<Stream> | null = null;
  private sending: Promise<AttemptOutcome | null> | null = null;
  private timer: Timer | null = null;
  /** The timer waits out a backoff, not the batch interval: nothing leaves before it fires. */
  private backingOff = false;
  /** Failed attempts since the last success: the backoff doubles with each. */
  private failures = 0;
  private seq = 0;
  /** Every entry up to this sequence number has left the queue, sent or dropped. */
  private leftSeq = 0;
  private readonly drops: Record<Stream, number>;
  /** Drops by a full queue since it became full; null while it has room. */
  private fullDrops: Record<Stream, number> | null = null;
  private closed = false;
  private stopping: Promise<void> | null = null;

  constructor(o: OtlpPushOptions<Item, Stream>) {
    this.o = o;
    this.clock = o.clock;
    this.capacity = positive(o.capacity, 10_000);
    this.batchSize = positive(o.batch, 512);
    this.intervalMs = positive(o.intervalMs, 1_000);
    this.prefix = `${o.what} push: `;
    const first = o.streams[0];
    if (first === undefined) throw new Error('an OTLP push needs at least one stream');
    this.firstStream = first;
    this.known = new Set(o.streams);
    this.drops = this.zero();
    this.exporter = new OtlpExport({ endpoint: o.endpoint, timeoutMs: positive(o.timeoutMs, 10_000), resource: o.resource, scope: o.scope });
    if (!this.exporter.oneRequestPerAttempt) {
      this.report('warn', 'the exporter keeps its own retries; an attempt may send a batch up to six times', {});
    }
  }

  /** Queues copies of the items; never blocks, never throws. */
  push(items: readonly Item[]): void {
    for (const item of items) {
      try {
        this.take(item);
      } catch (err) {
        this.drops[this.safeStream(item)] += 1;
        this.report('warn', 'an event could not be made into a log record, dropped', { id: this.safeId(item), error: message(err) });
      }
    }
    this.kick();
  }

  /** Items dropped since start, per stream. */
  dropped(): Record<Stream, number> {
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

  /** Flushes once more, then stops; items still queued are counted as dropped. */
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
      this.report('warn', 'the last flush failed', { error: message(err) });
    }
    const left = [...(this.current?.entries ?? []), ...this.queue];
    this.current = null;
    this.queue = [];
    if (left.length > 0) {
      const counts = this.countAll(left);
      this.report('warn', 'events not sent at stop were dropped', { events: left.length, ...counts });
    }
    try {
      await this.exporter.shutdown();
    } catch (err) {
      this.report('warn', 'the exporter did not stop cleanly', { error: message(err) });
    }
  }

  private take(item: Item): void {
    const stream = this.o.streamOf(item);
    if (!this.known.has(stream)) throw new Error(`the stream ${String(stream)} is not one of this push's`);
    if (this.closed) {
      this.drops[stream] += 1;
      return;
    }
    if (this.queued() >= this.capacity) {
      this.drops[stream] += 1;
      if (!this.fullDrops) {
        this.fullDrops = this.zero();
        this.report('warn', 'the queue is full, new events are dropped', { capacity: this.capacity });
      }
      this.fullDrops[stream] += 1;
      return;
    }
    if (this.fullDrops) {
      const counts: Record<Stream, number> = this.fullDrops;
      const dropped = Object.values<number>(counts).reduce((a, b) => a + b, 0);
      this.report('info', 'the queue has room again', { dropped, ...counts });
      this.fullDrops = null;
    }
    const record = this.exporter.encode(this.o.toRecord(item), this.clock.now());
    this.queue.push({ seq: ++this.seq, stream, record });
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
      const result = await this.exporter.send(batch.entries.map((e) => e.record));
      this.sending = null;
      return this.settle(batch, result);
    };
    this.sending = run().catch((err: unknown) => {
      this.sending = null;
      this.report('warn', 'an attempt failed unexpectedly', { error: message(err) });
      return null;
    });
    return this.sending;
  }

  private nextBatch(): Batch<Stream> | null {
    if (this.queue.length === 0) return null;
    return { entries: this.queue.splice(0, this.batchSize), refusals: 0 };
  }

  private settle(batch: Batch<Stream>, result: SendResult): AttemptOutcome {
    let dropped = false;
    let retryInMs: number | null = null;
    if (result.outcome === 'sent') {
      this.leave(batch);
      if (this.failures > 0) this.report('info', 'the collector takes events again', { failedAttempts: this.failures });
      this.failures = 0;
    } else {
      if (this.failures === 0) {
        this.report('warn', 'the collector does not take events; they wait in the queue', { outcome: result.outcome, reason: result.reason });
      }
      this.failures += 1;
      if (result.outcome === 'refused') batch.refusals += 1;
      if (batch.refusals >= REFUSALS_TO_DROP) {
        dropped = true;
        this.leave(batch);
        const counts = this.countAll(batch.entries);
        this.report('warn', 'a batch refused three times was dropped', { events: batch.entries.length, ...counts, reason: result.reason });
      }
      retryInMs = Math.min(BACKOFF_FIRST_MS * 2 ** (this.failures - 1), BACKOFF_MAX_MS);
      if (!this.closed) this.arm(retryInMs, true);
    }
    if (result.outcome === 'sent') this.kick();
    try {
      this.o.onAttempt?.({ outcome: result.outcome, events: batch.entries.length, refusals: batch.refusals, dropped, retryInMs, reason: result.reason });
    } catch {
      // An observer's failure is its own.
    }
    return result.outcome;
  }

  private leave(batch: Batch<Stream>): void {
    this.current = null;
    const last = batch.entries[batch.entries.length - 1];
    if (last) this.leftSeq = Math.max(this.leftSeq, last.seq);
  }

  /** Counts the entries as dropped; returns their counts per stream. */
  private countAll(entries: readonly Entry<Stream>[]): Record<Stream, number> {
    const counts = this.zero();
    for (const e of entries) {
      this.drops[e.stream] += 1;
      counts[e.stream] += 1;
    }
    return counts;
  }

  private zero(): Record<Stream, number> {
    const counts = {} as Record<Stream, number>;
    for (const s of this.o.streams) counts[s] = 0;
    return counts;
  }

  private safeStream(item: Item): Stream {
    try {
      const stream = this.o.streamOf(item);
      if (this.known.has(stream)) return stream;
    } catch {
      // Counted with the first stream below.
    }
    return this.firstStream;
  }

  private safeId(item: Item): unknown {
    try {
      return this.o.idOf?.(item);
    } catch {
      return undefined;
    }
  }

  private report(level: 'info' | 'warn', msg: string, attrs: Record<string, unknown>): void {
    try {
      this.o.onReport?.(level, this.prefix + msg, attrs);
    } catch {
      // Reporting never breaks the push.
    }
  }
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
}
