/**
 * One record per exchange on every plane, and per scheduled call (STYLE.md, "The seams the next
 * actors share"): opened by the plane, filled by the pipeline (route, path as the service sees
 * it, identity), by the planes' authentication (who called) and by the upstream call (status,
 * bytes, a copy of the body's start when an observer asked), closed by the plane once the answer
 * ended or the caller left. Observers read it when it is closed; none re-derives what it holds.
 * Endpoint audit, the access log and the metrics read the same record.
 *
 * A record is opened only while an observer listens, so the hot path allocates nothing for it
 * otherwise. Observers are told synchronously and must not throw or wait: anything slow they do
 * goes to their own queue (the audit recorder's one-way buffer).
 */
// The module's binding: the global `performance` is a getter, run at each of the two reads a record makes.
import { performance } from 'node:perf_hooks';
import type { Identity, RouteView } from '../core/model.ts';
import type { RequestHead } from '../http/exchange.ts';
import type { Outcome } from '../log/access.ts';

/** A caller that left before any answer (nginx's convention). */
export const CLIENT_CLOSED = 499;

export class RequestRecord {
  /** Set by the pipeline once a route matched. */
  route: RouteView | null = null;
  /** The path as the route forwards it (stripPrefix applied), percent-encoded. */
  servicePath: string | null = null;
  identity: Identity | null = null;
  /** Who called a gateway API (control and internal planes, the data plane's own addresses). */
  user: string | null = null;
  /** The token's name when a machine called a gateway API. */
  token: string | null = null;
  /** The schedule of a scheduled call. */
  schedule: string | null = null;
  /** The client's address as the plane resolved it for the pipeline (forwarded headers believed or not); null until then. */
  client: string | null = null;
  /** The code of the gateway's own refusal or failure (errors.ts), when it answered one. */
  error: string | null = null;
  /** The service answered: the status is the service's, not the gateway's. */
  upstreamAnswered = false;
  /** The endpoint template, when an observer or the pipeline knows it. */
  template: string | null = null;
  /** The status handed to the caller; 0 until then. */
  status = 0;
  /** Request body bytes, when the gateway read or copied them; null otherwise. */
  bytesIn: number | null = null;
  /** Answer body bytes relayed. */
  bytesOut = 0;
  /** An observer sets this before the upstream call to keep a copy of the body's first bytes. */
  bodyLimit = 0;
  /**
   * The copy: chunks of at most `bodyLimit` bytes in all (null once the body was larger), the
   * size received, and whether the body was received whole (an upstream may answer before it
   * read all of a streamed body).
   */
  body: { chunks: Uint8Array[] | null; size: number; complete: boolean } | null = null;
  outcome: 'answered' | 'aborted' = 'answered';
  /** performance.now() at close. */
  end = 0;
  /** Bit i: observer i listened when the record opened; only those are told (RequestRecords). */
  listeners = 0;

  constructor(
    readonly head: RequestHead,
    /** performance.now() when the request arrived (the door's reading). */
    readonly start: number,
  ) {}

  /** The upstream call hands each request chunk it sends on (only when `bodyLimit` > 0). */
  keep(chunk: Uint8Array, last: boolean): void {
    const body = (this.body ??= { chunks: [], size: 0, complete: false });
    if (chunk.byteLength > 0) {
      body.size += chunk.byteLength;
      // Chunks are the door's own copies: holding them is the copy, and it stops at the limit.
      if (body.chunks !== null && body.size > this.bodyLimit) body.chunks = null;
      else body.chunks?.push(chunk);
    }
    if (last) body.complete = true;
    this.bytesIn = body.size;
  }

  /** The body declared a length past `bodyLimit`: nothing is kept. */
  tooLarge(declared: number): void {
    this.body = { chunks: null, size: declared, complete: true };
    this.bytesIn = declared;
  }
}

export interface RecordObserver {
  /** Cheap, per exchange: does this observer want records now? */
  listening(): boolean;
  /** The pipeline let the request through; the upstream call follows (ask for the body here). */
  passed?(record: RequestRecord): void;
  /** The answer ended, or the caller left (told only when this observer listened at open). */
  closed(record: RequestRecord): void;
}

export class RequestRecords {
  /** At most 31 observers (one bit each in `listeners`). */
  constructor(
    private readonly observers: readonly RecordObserver[],
    private readonly onError: (err: unknown) => void,
  ) {}

  /** A record for this exchange, or undefined when no observer listens. */
  open(head: RequestHead): RequestRecord | undefined {
    // Indexed: this runs on every data-plane request, listened to or not. An observer that did not
    // listen at open hears nothing of the record, so none re-checks its own switch at close.
    let listeners = 0;
    for (let i = 0; i < this.observers.length; i++) {
      if (this.observers[i]!.listening()) listeners |= 1 << i;
    }
    if (listeners === 0) return undefined;
    const record = new RequestRecord(head, head.receivedMono);
    record.listeners = listeners;
    return record;
  }

  passed(record: RequestRecord): void {
    for (let i = 0; i < this.observers.length; i++) {
      if ((record.listeners & (1 << i)) === 0) continue;
      try {
        this.observers[i]!.passed?.(record);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /**
   * Closes the record once the answer ended: the status is the one the caller got (`sent`, the
   * exchange's), and a caller that left before any status got 499. Observers never throw here.
   */
  close(record: RequestRecord, aborted: boolean, sent = 0): void {
    record.end = performance.now();
    // A caller that left after the head went out got that status: only one that got none is 499.
    if (record.status === 0) record.status = sent;
    if (aborted) {
      record.outcome = 'aborted';
      if (record.status === 0) record.status = CLIENT_CLOSED;
    }
    for (let i = 0; i < this.observers.length; i++) {
      if ((record.listeners & (1 << i)) === 0) continue;
      try {
        this.observers[i]!.closed(record);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}

/**
 * ok: a status below 400. rejected: the service answered 4xx. refused: the gateway answered 4xx
 * itself (authentication, rules, hours, no route, a bad request). upstream-down: the gateway could
 * not reach the service, it did not answer in time, or its certificate was not trusted.
 * failed: everything else: a 5xx, an answer broken off half-way, a caller that left.
 */
export function outcomeOf(record: Pick<RequestRecord, 'status' | 'outcome' | 'error' | 'upstreamAnswered'>): Outcome {
  if (record.outcome === 'aborted') return 'failed';
  const status = record.status;
  if (record.upstreamAnswered) return status < 400 ? 'ok' : status < 500 ? 'rejected' : 'failed';
  if (record.error !== null && record.error.startsWith('upstream.') && record.error !== 'upstream.failed') return 'upstream-down';
  if (status === 0) return 'failed';
  return status < 400 ? 'ok' : status < 500 ? 'refused' : 'failed';
}
