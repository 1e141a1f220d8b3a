/**
 * An HTTPS door's connection once TLS is up. The door reads the requests itself while they are
 * plain (h1-request-head.ts: HTTP/1.1 or 1.0, origin form, no body or one of a stated length or
 * in chunks, no upgrade), one at a time, each answered before the next is read (pipelined requests
 * wait in order). An answer given before its request's body was all read closes the connection
 * after it: the rest of the body is read and dropped, never taken for a request. The first request
 * that is not plain, at a request's boundary, hands the connection to node:http with the bytes
 * not yet read put back: node:http then reads that request and every later one with its strict
 * parser, answers its refusals itself (400, 417, 505), and takes targets in absolute form and
 * WebSocket upgrades (tls-sockets.ts). Plain requests, nearly all of a data plane's calls, skip node:http's two
 * streams per request (bench/RESULTS.md, "The HTTPS door serves plain requests itself").
 */
import { performance } from 'node:perf_hooks';
import type { TLSSocket } from 'node:tls';
import type { Clock } from '../clock/clock.ts';
import type { PlaneName } from '../settings/settings.ts';
import type { Exchange } from './exchange.ts';
import { readPlainHead } from './h1-request-head.ts';
// The one limit of a request head for every door (node:http's `maxHeaderSize` too).
import { MAX_HEAD_BYTES } from './uws-limits.ts';
import type { InFlight } from './in-flight.ts';
import { peerAddress } from './node-request.ts';
import { BodyQueue } from './body-queue.ts';
import { ChunkedBody, type PieceSink } from './chunked-body.ts';
import { KEEP_ALIVE_S, TlsH1Exchange, type AnswerSide } from './tls-h1-exchange.ts';
import { BAD_REQUEST, TIMED_OUT, TOO_LARGE, endAndLinger } from './h1-refusal.ts';

export interface PlainDoor {
  readonly plane: PlaneName;
  readonly clock: Clock;
  readonly flight: InFlight;
  /** Serves one exchange (the plane's handler). */
  serve(ex: Exchange): void;
  /** Takes the connection on with node:http, from the bytes it will read next. */
  fallback(socket: TLSSocket): void;
  /** The connection is no longer this door's to close (it closed, or node:http has it). */
  forget(conn: TlsH1Connection): void;
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');
const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const EMPTY = Buffer.alloc(0);

function refuseChunks(why: string): never {
  throw new Error(`the request body's chunks cannot be read: ${why}`);
}
/**
 * node:http's `headersTimeout`: a head that keeps trickling in (a byte now and then, each within
 * the idle time) is refused once it took this long, so that slow clients cannot hold connections.
 */
const HEAD_TIMEOUT_MS = 60_000;
/**
 * node:http's `requestTimeout`: the whole request, body included, within five minutes. Both limits
 * read the gateway's clock (the test clock moves them); the idle close is the socket's, on real time.
 */
const REQUEST_TIMEOUT_MS = 300_000;
/** What an answered request's body may still bring before the connection is cut rather than ended. */
const LINGER_BYTES = 4 * 1024 * 1024;
/** Bytes a client may send ahead of the answer it waits for (pipelined requests) before it is read no further. */
const AHEAD_MAX = 4 * MAX_HEAD_BYTES;

export class TlsH1Connection implements AnswerSide {
  readonly #door: PlainDoor;
  readonly #remoteAddress: string;
  /** Bytes read and not yet taken as a request. */
  #held: Buffer | null = null;
  #current: TlsH1Exchange | null = null;
  /** The current request's body as it is read: its stated bytes still to come, or its chunks' reader. */
  #body: BodyQueue | null = null;
  #bodyLeft = 0;
  #chunks: ChunkedBody | null = null;
  /** When the current request's head came (the gateway's clock): its body must be in by REQUEST_TIMEOUT_MS. */
  #bodySince = 0;
  /** Inside #next: an answer given at once continues its loop instead of calling it again. */
  #turning = false;
  /** The connection ends after the answer in flight (the client asked, or the door drains). */
  #ending = false;
  #done = false;
  /** When the head being read began (the gateway's clock), 0 when none is: a head that trickles in is cut at HEAD_TIMEOUT_MS. */
  #headSince = 0;
  /** Dropping the rest of an answered request's body (#linger), and how much more may come. */
  #lingering = false;
  #lingerBudget = 0;
  /** Waiting for the answers written to go out before node:http takes the connection: bytes read are held. */
  #handing = false;

  constructor(readonly socket: TLSSocket, door: PlainDoor) {
    this.#door = door;
    this.#remoteAddress = peerAddress(socket);
    socket.on('data', this.#onData);
    socket.on('close', this.#onClose);
    // A listener of its own, not setTimeout's callback: that one is told once, and an answer that
    // outlasts the idle time must not spend it.
    socket.on('timeout', this.#onIdle);
    socket.setTimeout(KEEP_ALIVE_S * 1000);
  }

  /** An answer whose request's body is not all read closes the connection: what is left is never read. */
  get closing(): boolean {
    return this.#ending || this.#bodyOpen || this.#door.flight.draining;
  }

  get #bodyOpen(): boolean {
    return this.#bodyLeft > 0 || this.#chunks !== null;
  }

  /** Idle now (no answer in flight): closed at once, as node:http closes its idle ones; otherwise after the answer in flight. */
  closeIdle(): void {
    if (this.#current === null) this.socket.destroy();
    else this.#ending = true;
  }

  /**
   * The door closes: an answer still in flight is cut; the bytes of one already given still go
   * out (an answer leaves the door's flight once written, before TLS sent it), within the linger.
   */
  destroy(): void {
    if (this.#current !== null) {
      this.socket.destroy();
      return;
    }
    this.#done = true;
    endAndLinger(this.socket);
  }

  readonly #onData = (chunk: Buffer): void => {
    // Closing: what comes after the last answer is not read.
    if (this.#done) return;
    this.#held = this.#held === null ? chunk : Buffer.concat([this.#held, chunk]);
    if (this.#handing) return;
    if (this.#bodyOpen) {
      if (!this.#bodyOnTime()) return;
      this.#feed();
      if (this.#done) return;
    }
    if (this.#lingering) {
      this.#lingerBudget -= chunk.length;
      if (!this.#bodyOpen) this.#end();
      else if (this.#lingerBudget <= 0) this.socket.destroy();
      return;
    }
    if (this.#headSince !== 0 && this.#door.clock.now() - this.#headSince > HEAD_TIMEOUT_MS) {
      this.#refuse(TIMED_OUT);
      return;
    }
    if (this.#current === null) this.#next();
    else if (this.#held !== null && this.#held.length > AHEAD_MAX) this.socket.pause();
  };

  readonly #onClose = (): void => {
    this.#done = true;
    const ex = this.#current;
    this.#current = null;
    this.#body = null;
    this.#door.forget(this);
    if (ex !== null) {
      ex.gone();
      this.#door.flight.leave();
    }
  };

  /** No byte came or went for the idle time: an idle connection ends; an answer in flight goes on. */
  readonly #onIdle = (): void => {
    if (this.#current === null) this.socket.destroy();
    else this.#bodyOnTime();
  };

  /**
   * node:http's `requestTimeout`: a body still coming after REQUEST_TIMEOUT_MS (one that trickles,
   * or stopped) is refused, so that slow clients cannot hold requests and the calls behind them.
   * Checked as its bytes come, and at each idle time.
   */
  #bodyOnTime(): boolean {
    if (!this.#bodyOpen || this.#door.clock.now() - this.#bodySince <= REQUEST_TIMEOUT_MS) return true;
    this.#badBody(new Error(`the request body was still coming after ${REQUEST_TIMEOUT_MS / 1000} s`), TIMED_OUT);
    return false;
  }

  answered(ex: TlsH1Exchange, close: boolean): void {
    if (ex !== this.#current) return;
    this.#current = null;
    this.#body = null;
    this.#door.flight.leave();
    if (this.#bodyOpen) {
      this.#linger();
      return;
    }
    if (close || this.#ending) {
      this.#end();
      return;
    }
    if (this.socket.isPaused()) this.socket.resume();
    this.#next();
  }

  /**
   * The answer went before its request's body was all read (it said `Connection: close`): the
   * rest of the body is read and dropped, up to LINGER_BYTES, and the connection ends once it came.
   * Closing with the client's bytes unread would reset the connection, and a client still sending
   * (a large upload refused at once) would lose the answer with it.
   */
  #linger(): void {
    this.#lingering = true;
    this.#lingerBudget = LINGER_BYTES;
    this.#ending = true;
    if (this.socket.isPaused()) this.socket.resume();
    this.#feed();
    if (!this.#done && !this.#bodyOpen) this.#end();
  }

  #end(): void {
    if (this.#done) return;
    this.#done = true;
    this.#held = null;
    // Ends once what was written went out, and closes without waiting for the client's end.
    this.socket.destroySoon();
  }

  /** Takes the requests held, one at a time, until one is incomplete, not plain, or waits for its answer. */
  #next(): void {
    if (this.#turning) return;
    this.#turning = true;
    try {
      while (this.#current === null && this.#held !== null && !this.#done && !this.#handing) {
        const held = this.#held;
        const end = held.indexOf(CRLF_CRLF);
        if (end < 0 ? held.length > MAX_HEAD_BYTES : end + 4 > MAX_HEAD_BYTES) {
          this.#refuse(TOO_LARGE);
          return;
        }
        if (end < 0) {
          if (this.#headSince === 0) this.#headSince = this.#door.clock.now();
          return;
        }
        this.#headSince = 0;
        const head = readPlainHead(held.toString('latin1', 0, end));
        if (head === null) {
          this.#handOver();
          return;
        }
        this.#held = end + 4 === held.length ? null : held.subarray(end + 4);
        if (head.close) this.#ending = true;
        const mono = performance.now();
        const door = this.#door;
        const hasBody = head.length > 0 || head.chunked;
        const body = hasBody ? new BodyQueue(() => this.socket.pause(), () => this.socket.resume()) : null;
        const receivedAt = door.clock.at(mono);
        const ex = new TlsH1Exchange(this, head, door.plane, this.#remoteAddress, mono, receivedAt, body);
        this.#current = ex;
        this.#body = body;
        this.#bodyLeft = head.length;
        if (head.chunked) this.#chunks = new ChunkedBody(refuseChunks);
        if (hasBody) this.#bodySince = receivedAt;
        // As node:http does: the client is told at once to send the body it holds back.
        if (head.expectsContinue && hasBody && this.#held === null) this.socket.write(CONTINUE, 'latin1');
        if (body !== null) this.#feed();
        door.flight.enter();
        door.serve(ex);
      }
    } finally {
      this.#turning = false;
    }
  }

  /** The bytes held that belong to the current request's body go to it; what follows is the next request. */
  #feed(): void {
    const held = this.#held;
    if (held === null) return;
    // The socket's reads are fresh buffers, never reused: a view of one is the body's own.
    const chunks = this.#chunks;
    if (chunks !== null) {
      let rest: Buffer | null;
      try {
        rest = chunks.read(held, this.#pieces);
      } catch (err) {
        this.#badBody(err as Error);
        return;
      }
      if (rest === null) {
        this.#held = null;
        return;
      }
      this.#chunks = null;
      this.#held = rest.length === 0 ? null : rest;
      this.#body?.push(EMPTY, true);
      return;
    }
    const n = Math.min(held.length, this.#bodyLeft);
    this.#bodyLeft -= n;
    this.#held = n === held.length ? null : held.subarray(n);
    this.#body?.push(held.subarray(0, n), this.#bodyLeft === 0);
  }

  /** The chunks' pieces to the current body (none while an answered request's rest is dropped). */
  readonly #pieces: PieceSink = { data: (piece) => this.#body?.push(piece, false) };

  /**
   * Chunks that cannot be read one way only, or a body past its time: the body fails where it is
   * read, and the client gets node:http's answer (400, 408) if its own has not begun; the
   * connection ends either way.
   */
  #badBody(err: Error, answer = BAD_REQUEST): void {
    this.#chunks = null;
    this.#bodyLeft = 0;
    this.#body?.fail(err);
    const ex = this.#current;
    if (ex !== null && ex.status === 0) this.#refuse(answer);
    else this.socket.destroy();
    // The request is over: its handler's answer, if it comes, has nowhere to go.
    ex?.gone();
  }

  /**
   * A head past the size limit, still coming after the time limit, or a body that cannot be read,
   * is refused here as node:http refuses one: the answer goes out, then the connection ends once the
   * client stopped sending (h1-refusal.ts).
   */
  #refuse(answer: string): void {
    this.#done = true;
    this.#held = null;
    endAndLinger(this.socket, answer);
  }

  /**
   * node:http reads on from the request that is not plain, with everything after it, once the
   * answers written before have gone out: it destroys the socket on a request it refuses, which
   * would drop them on the way.
   */
  #handOver(): void {
    this.#handing = true;
    const socket = this.socket;
    socket.pause();
    // An empty write's callback runs once every write before it went out (TLS keeps the order).
    socket.write('', 'latin1', () => {
      socket.off('data', this.#onData);
      socket.off('close', this.#onClose);
      socket.off('timeout', this.#onIdle);
      socket.setTimeout(0);
      this.#done = true;
      this.#door.forget(this);
      if (socket.destroyed) return;
      const held = this.#held;
      this.#held = null;
      if (held !== null) socket.unshift(held);
      this.#door.fallback(socket);
      // node:http's listener does not restart a stream paused by hand: the bytes put back flow to its
      // parser first, then it reads the socket itself.
      socket.resume();
    });
  }
}
