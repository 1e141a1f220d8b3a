/**
 * One request on a uWS door, as the Exchange the pipeline sees. A class rather than an object of
 * closures: every request on the data plane makes one, and its methods live once on the prototype
 * instead of a dozen functions and their context per request (bench/RESULTS.md, "The floor").
 */
import type * as uWS from 'uWebSockets.js';
import type { PlaneName } from '../settings/settings.ts';
import { BodyQueue, noBody, readWhole } from './body-queue.ts';
import type { InFlight } from './in-flight.ts';
import { StatedLengthBody } from './uws-stated-length.ts';
import { CLOSING, bodiless, doorOwned, headLength, statusLine } from './answer-rules.ts';
import { headerRecord } from './header-record.ts';
import { isAmbiguousFraming } from './request-framing.ts';
import type { Exchange, OutgoingHeaders } from './exchange.ts';

/**
 * 204 and 304 carry no body, and a 204 must not announce a length (RFC 9110 8.6): end() would
 * write `Content-Length: 0`, endWithoutBody() writes none. On a connection about to close (a
 * draining gateway) end() stays, because endWithoutBody() cannot close it.
 */
function endBodiless(res: uWS.HttpResponse, closing: boolean): void {
  if (closing) res.end('', true);
  else res.endWithoutBody();
}

/** A character past ASCII: a byte of obs-text, as header values are read (one character a byte). */
const OBS_TEXT = /[^\x00-\x7f]/;

/**
 * uWS writes a string as UTF-8: a value holding obs-text (a Latin-1 `é` a service sent as one byte)
 * goes as its bytes instead, so the client gets what the service wrote, as from the HTTPS doors.
 */
function headerBytes(value: string): string | Uint8Array {
  return OBS_TEXT.test(value) ? Buffer.from(value, 'latin1') : value;
}

export function writeHeaders(res: uWS.HttpResponse, headers: OutgoingHeaders): void {
  for (const name in headers) {
    const value = headers[name]!;
    // uWS writes content-length itself from what end() receives, and its own Date.
    if (doorOwned(name, value)) continue;
    if (typeof value === 'string') res.writeHeader(name, headerBytes(value));
    else for (const v of value) res.writeHeader(name, headerBytes(v));
  }
}

/** The record `readHeaders` fills: one function for every request instead of a closure each. */
const NONE: Record<string, string> = headerRecord();
let reading = NONE;
function readField(k: string, v: string): void {
  const prev = reading[k];
  reading[k] = prev === undefined ? v : `${prev}${k === 'cookie' ? '; ' : ', '}${v}`;
}

/** The request's headers, copied (uWS frees them on return); repeated ones joined, cookies with "; ". */
export function readHeaders(req: uWS.HttpRequest): Record<string, string> {
  const headers = headerRecord();
  reading = headers;
  req.forEach(readField);
  reading = NONE;
  return headers;
}

/** uWS gives the peer's address as ASCII text. */
const ADDRESS_TEXT = new TextDecoder();

export class UwsExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Record<string, string>;
  readonly remoteAddress: string;
  readonly secure = false;
  readonly receivedAt: number;
  /**
   * The request's body could be framed two ways (request-framing.ts), or is chunked: the door cuts
   * the connection. uWebSockets.js reads chunk sizes leniently (a chunk extension's `;a=b` read
   * as hex digits, a space as the end of the size): a body framed by chunks could swallow the
   * request after it on the connection, or leave part of itself to be read as a request.
   */
  readonly ambiguousFraming: boolean;
  /**
   * The body comes in chunks, which this door does not read (above): the plane answers 411
   * `body.length-required` at once, and the answer closes the connection before uWS parses a
   * byte past the head.
   */
  readonly lengthRequired: boolean;
  /** uWS answers an HTTP/1.0 request 505 itself: none reaches an exchange. */
  readonly http10 = false;
  aborted = false;
  responded = false;
  status = 0;

  /** Still counted in the door's flight. */
  #counted = true;
  #abortHandlers: Array<() => void> | null = null;
  /** The wait of `drained()`, ended by the socket's room or by the client leaving (one field: nothing piles up). */
  #drainWait: (() => void) | null = null;
  #headSent = false;
  #bodilessHead = false;
  /** Chunks were written with the head: the answer is chunked and its head is out. */
  #chunked = false;
  /** Made by writeHead for a streamed answer of a stated length only (see uws-stated-length.ts). */
  #stated: StatedLengthBody | undefined = undefined;
  /**
   * The status and headers writeHead was given, not written yet: they go out in the same write as
   * the first piece of the body (one send instead of two). uWS completes a head only with a body
   * write; a stated length can be sent with none, so when no body came in the same turn (a
   * service that answers its head first, then computes or streams), the head goes alone.
   */
  #pendingStatus = 0;
  #pendingHeaders: OutgoingHeaders | null = null;
  readonly #queue: BodyQueue | undefined;

  constructor(
    private readonly res: uWS.HttpResponse,
    req: uWS.HttpRequest,
    readonly plane: PlaneName,
    private readonly flight: InFlight,
    now: number,
    readonly receivedMono: number,
  ) {
    flight.enter();
    const headers = readHeaders(req);
    this.headers = headers;
    this.method = req.getCaseSensitiveMethod().toUpperCase();
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    this.remoteAddress = ADDRESS_TEXT.decode(res.getRemoteAddressAsText());
    this.receivedAt = now;
    const coded = headers['transfer-encoding'] !== undefined;
    this.ambiguousFraming = (coded || headers['content-length'] !== undefined) && isAmbiguousFraming(headers);
    this.lengthRequired = coded && !this.ambiguousFraming;
    // Without Content-Length or Transfer-Encoding a request has no body (RFC 9112 6.3): no queue
    // and no onData, which uWS would call once with an empty buffer (a copy and closures per request).
    const length = headers['content-length'];
    const bodyless = coded || length === undefined || length === '0' || this.ambiguousFraming;
    const queue = bodyless ? undefined : new BodyQueue(() => { if (this.#alive()) res.pause(); }, () => { if (this.#alive()) res.resume(); });
    this.#queue = queue;
    res.onAborted(() => this.#onAborted());
    if (queue) {
      res.onData((ab, last) => {
        // The ArrayBuffer is only valid inside this callback: copy it.
        queue.push(new Uint8Array(ab.slice(0)), last);
      });
    }
  }

  #onAborted(): void {
    this.aborted = true;
    this.#queue?.fail(new Error('the client closed the connection'));
    this.#drainWait?.();
    this.#drainWait = null;
    this.#finish();
    const handlers = this.#abortHandlers;
    this.#abortHandlers = null;
    if (handlers) for (const fn of handlers) fn();
  }

  /** Out of the door's flight (once). */
  #finish(): void {
    if (!this.#counted) return;
    this.#counted = false;
    this.flight.leave();
  }

  /**
   * After onAborted or a completed end() the uWS response object is dead: touching it throws from
   * inside uWS. Body chunks may still arrive after an early answer (a refused upload), so flow
   * control checks first.
   */
  #alive(): boolean {
    return !this.aborted && !this.responded && this.#stated?.complete !== true;
  }

  #headOut(): void {
    const hdrs = this.#pendingHeaders;
    if (hdrs === null) return;
    this.#pendingHeaders = null;
    this.res.writeStatus(statusLine(this.#pendingStatus));
    writeHeaders(this.res, hdrs);
    if (this.flight.draining) writeHeaders(this.res, CLOSING);
  }

  onAbort(fn: () => void): void {
    if (this.aborted) fn();
    else (this.#abortHandlers ??= []).push(fn);
  }

  readBody(limit: number): Promise<Buffer> {
    return readWhole(this.#queue, Number(this.headers['content-length'] ?? 0), limit);
  }

  bodyStream(): AsyncIterable<Uint8Array> {
    return this.#queue ? this.#queue.stream() : noBody();
  }

  send(status: number, hdrs: OutgoingHeaders, body?: string | Uint8Array): void {
    if (this.aborted || this.responded) return;
    this.responded = true;
    this.status = status;
    const res = this.res;
    // Closed with the answer, inside the handler that uWS called for the head: its parser then
    // stops there, and no byte of a chunked body is read as a request.
    const draining = this.flight.draining || this.lengthRequired;
    res.cork(() => {
      res.writeStatus(statusLine(status));
      writeHeaders(res, hdrs);
      if (draining) writeHeaders(res, CLOSING);
      if (this.method === 'HEAD') {
        // endWithoutBody(length) closes the connection in this uWS build, the next request on it
        // lost: the length goes as a header of our own, unless the connection closes anyway.
        if (draining) res.endWithoutBody(headLength(hdrs, body), true);
        else {
          res.writeHeader('content-length', String(headLength(hdrs, body)));
          res.endWithoutBody();
        }
      } else if (bodiless(status)) {
        endBodiless(res, draining);
      } else {
        res.end(body ?? '', draining);
      }
    });
    this.#finish();
  }

  writeHead(status: number, hdrs: OutgoingHeaders): void {
    if (this.aborted || this.responded || this.#headSent) return;
    this.#headSent = true;
    this.status = status;
    this.#bodilessHead = bodiless(status);
    const length = hdrs['content-length'];
    const total = !this.#bodilessHead && this.method !== 'HEAD' && typeof length === 'string' && /^[0-9]{1,15}$/.test(length) ? Number(length) : 0;
    this.#pendingStatus = status;
    this.#pendingHeaders = hdrs;
    if (total > 0) {
      const body = new StatedLengthBody(this.res, total, () => {
        this.responded = true;
        this.#finish();
      }, () => this.#headOut());
      this.#stated = body;
      this.onAbort(() => body.abandon());
      queueMicrotask(() => {
        if (this.#pendingHeaders !== null && this.#alive()) body.open();
      });
    }
  }

  write(chunk: Uint8Array): boolean {
    if (this.aborted || this.responded) return true;
    if (this.#stated) return this.#stated.write(chunk);
    let ok = true;
    this.res.cork(() => {
      this.#headOut();
      ok = this.res.write(chunk);
    });
    this.#chunked = true;
    return ok;
  }

  drained(): Promise<void> {
    if (this.aborted || this.responded) return Promise.resolve();
    if (this.#stated) return this.#stated.drained();
    return new Promise<void>((resolve) => {
      this.#drainWait = resolve;
      this.res.onWritable(() => {
        this.#drainWait = null;
        resolve();
        return true;
      });
    });
  }

  end(chunk?: Uint8Array): void {
    if (this.aborted || this.responded) return;
    const stated = this.#stated;
    if (stated) {
      if (chunk && chunk.byteLength > 0) stated.write(chunk);
      stated.end();
      return;
    }
    this.responded = true;
    const res = this.res;
    // Once chunks went out, uWS's `end(…, true)` writes its `Connection: close` line where the
    // body is (the head is gone): the answer would end malformed. A head written while draining
    // already says `connection: close`; one written before leaves the connection to the drain.
    const close = this.flight.draining && !this.#chunked;
    res.cork(() => {
      this.#headOut();
      if (this.#bodilessHead) endBodiless(res, close);
      else res.end(chunk ?? '', close);
    });
    this.#finish();
  }

  abort(): void {
    if (this.aborted || this.responded) return;
    this.responded = true;
    // A body that already reached its stated length ended the response; there is nothing left to cut.
    if (this.#stated?.complete !== true) this.res.close();
    this.#finish();
  }
}
