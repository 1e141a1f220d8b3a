/**
 * The pipeline's second ending (the first is `relay` in upstream.ts): the call is sent and at
 * most `limit` bytes of the answer are kept; past that the answer is cut, never read whole. A
 * scheduled call needs the status and a sentence, not a file a service may choose to send.
 */
import { util, type Dispatcher } from 'undici';
import type { Clock } from '../clock/clock.ts';
import { failure, type UpstreamCall } from './upstream.ts';

export interface Collected {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The answer's first `limit` bytes (decoded as UTF-8; a character cut at the edge is replaced). */
  readonly text: string;
  /** More came than `limit`: the rest was not read. */
  readonly cut: boolean;
}

export interface CollectOptions {
  /** Request body, sent whole. */
  readonly body: string | undefined;
  readonly limit: number;
  /** Told once the request is written and the answer has not begun (the `waiting` phase). */
  readonly onSent?: () => void;
  /**
   * The whole call's bound, read on the gateway's clock (the test clock in tests): the call's
   * `timeoutMs` from the moment it is sent. The upstream client's own timeouts are idle ones (no
   * byte for that long), so a service that trickles its answer a byte at a time would hold the
   * call, and its run, for ever. At the deadline an answer that began is taken as it stands
   * (its status closes the run); one that did not is a 504.
   */
  readonly clock?: Clock;
}

/**
 * The handler uses undici's callback interface (onConnect … onComplete) rather than the
 * controller one: only it hears `onRequestSent`, the moment the request has left and the answer is
 * awaited.
 */
type LegacyHandler = Dispatcher.DispatchHandler & { onRequestSent?(): void };

const CUT = Symbol('answer cut at the limit');

/** Sends the call; resolves with the answer, or rejects with the refusal (502/504) a person reads. */
export function collect(call: UpstreamCall, o: CollectOptions): Promise<Collected> {
  return new Promise<Collected>((resolve, reject) => {
    let status = 0;
    let headers: Record<string, string | string[] | undefined> = {};
    const chunks: Buffer[] = [];
    let size = 0;
    let abort: ((err?: Error) => void) | undefined;
    let sent = false;
    let settled = false;
    const deadline = o.clock?.after(call.timeoutMs, () => {
      if (settled) return;
      if (status !== 0) finish(true);
      else fail(Object.assign(new Error('no answer before the call\'s deadline'), { code: 'UPSTREAM_HEADERS_TIMEOUT' }));
      abort?.(Object.assign(new Error('the call\'s deadline passed'), { [CUT]: true }));
    });
    /** Settles the call once, whichever of the answer, the error and the deadline comes first. */
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      deadline?.cancel();
      return true;
    };
    const finish = (cut: boolean) => {
      if (!settle()) return;
      const text = Buffer.concat(chunks, Math.min(size, o.limit)).toString('utf8');
      resolve({ status, headers, text, cut });
    };
    const fail = (err: unknown) => {
      if (settle()) reject(failure(err, call));
    };
    const handler: LegacyHandler = {
      onConnect(abortFn) {
        abort = abortFn;
        // Its deadline passed while it waited for a connection: the run is settled, nothing goes.
        if (settled) abortFn(Object.assign(new Error('the call\'s deadline passed'), { [CUT]: true }));
      },
      onRequestSent() {
        if (sent) return;
        sent = true;
        o.onSent?.();
      },
      onHeaders(statusCode, rawHeaders) {
        if (statusCode < 200) return true;
        status = statusCode;
        call.health.answered(call.origin);
        headers = util.parseHeaders(rawHeaders as Buffer[]) as Record<string, string | string[] | undefined>;
        return true;
      },
      onData(chunk) {
        if (chunk.byteLength === 0) return true;
        chunks.push(chunk);
        size += chunk.byteLength;
        if (size > o.limit) {
          // Enough to judge the answer: the rest is not read, the connection is let go.
          finish(true);
          abort?.(Object.assign(new Error('answer cut at the limit'), { [CUT]: true }));
          return false;
        }
        return true;
      },
      onComplete() {
        finish(false);
      },
      onError(err) {
        if ((err as unknown as Record<symbol, unknown>)[CUT]) return;
        if (status !== 0) {
          // The answer began and broke off: what came is what the service said.
          finish(true);
          return;
        }
        fail(err);
      },
    };
    call.pools.get(call.origin).dispatch({
      path: call.path,
      method: call.method as Dispatcher.HttpMethod,
      headers: call.headers,
      body: o.body ?? null,
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
    }, handler);
  });
}
