/**
 * The Exchange of the HTTPS doors: one request of node:http and its answer, read and written the
 * way the plain doors' UwsExchange does (answer-rules.ts). A class with its methods on the
 * prototype and one listener shared by every response, so that a request makes one object and no
 * closures: as on the plain doors, where that was worth several per cent of the data plane's CPU
 * (bench/RESULTS.md, "What changed on the request path").
 */
import { performance } from 'node:perf_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../clock/clock.ts';
import type { PlaneName } from '../settings/settings.ts';
import { GatewayError } from './errors.ts';
import { headerRecord } from './header-record.ts';
import type { Exchange, OutgoingHeaders } from './exchange.ts';
import { CLOSING, bodiless, doorOwned, headLength } from './answer-rules.ts';
import { peerAddress, readNodeHeaders } from './node-request.ts';
import type { InFlight } from './in-flight.ts';

/** The exchange of a response, for the listener every response shares. */
const EXCHANGE = Symbol('exchange');
type Tracked = ServerResponse & { [EXCHANGE]?: TlsExchange };

function onResponseClose(this: Tracked): void {
  this[EXCHANGE]?.closed();
}

function headersOf(hdrs: OutgoingHeaders, extra: OutgoingHeaders | undefined): Record<string, string | string[]> {
  const out = headerRecord<string | string[]>();
  for (const name in hdrs) {
    const value = hdrs[name]!;
    if (doorOwned(name, value)) continue;
    out[name] = typeof value === 'string' ? value : [...value];
  }
  if (extra) Object.assign(out, extra);
  return out;
}

/** A request target in absolute form: its authority, then its path and query (or nothing). */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)((?:[/?][^#]*)?)$/i;

export class TlsExchange implements Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Record<string, string>;
  readonly remoteAddress: string;
  readonly secure = true;
  /** node:http reads chunked bodies strictly: this door takes them. */
  readonly lengthRequired = false;
  readonly http10: boolean;
  readonly receivedAt: number;
  readonly receivedMono: number;
  aborted = false;
  responded = false;
  status = 0;

  #abortHandlers: Array<() => void> | null = null;
  /** The wait of `drained()`, ended by the drain or by the client leaving (one field: nothing piles up). */
  #drainWait: (() => void) | null = null;
  #headSent = false;
  #bodilessHead = false;
  /** The relayed length the head stated (null: none), and the body bytes written under it. */
  #stated: number | null = null;
  #written = 0;
  /** Still counted in the door's flight. */
  #counted = true;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    readonly plane: PlaneName,
    clock: Clock,
    private readonly flight: InFlight,
  ) {
    flight.enter();
    this.headers = readNodeHeaders(req);
    let url = req.url ?? '/';
    // Origin form (`/…`) is nearly every request: the expression runs only for the others.
    const absolute = url.charCodeAt(0) === 0x2f ? null : ABSOLUTE_FORM.exec(url);
    if (absolute !== null) {
      // RFC 9112 3.2.2: the target's authority is the request's host, whatever Host said. One
      // holding user information (`user:pw@host`) is then a Host the gateway refuses (400), and
      // neither it nor the scheme reaches the path the access log writes.
      this.headers.host = absolute[1]!;
      const rest = absolute[2]!;
      url = rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
    }
    const q = url.indexOf('?');
    this.method = (req.method ?? 'GET').toUpperCase();
    this.path = q === -1 ? url : url.slice(0, q);
    this.query = q === -1 ? '' : url.slice(q + 1);
    this.remoteAddress = peerAddress(req.socket);
    this.http10 = req.httpVersion === '1.0';
    this.receivedMono = performance.now();
    this.receivedAt = clock.at(this.receivedMono);
    (res as Tracked)[EXCHANGE] = this;
    res.on('close', onResponseClose);
  }

  /** The response closed: finished, or the client went away before it was. */
  closed(): void {
    if (!this.res.writableFinished && !this.aborted) {
      this.aborted = true;
      this.#drainWait?.();
      this.#drainWait = null;
      const handlers = this.#abortHandlers;
      this.#abortHandlers = null;
      if (handlers) for (const fn of handlers) fn();
    }
    (this.res as Tracked)[EXCHANGE] = undefined;
    if (this.#counted) {
      this.#counted = false;
      this.flight.leave();
    }
  }

  #closing(): OutgoingHeaders | undefined {
    return this.flight.draining ? CLOSING : undefined;
  }

  onAbort(fn: () => void): void {
    if (this.aborted) fn();
    else (this.#abortHandlers ??= []).push(fn);
  }

  async readBody(limit: number): Promise<Buffer> {
    if (Number(this.req.headers['content-length'] ?? 0) > limit) throw new GatewayError('body.too-large', `The request body may be at most ${limit} bytes.`);
    const parts: Buffer[] = [];
    let size = 0;
    for await (const chunk of this.req as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      if (size > limit) throw new GatewayError('body.too-large', `The request body may be at most ${limit} bytes.`);
      parts.push(chunk);
    }
    return Buffer.concat(parts);
  }

  bodyStream(): AsyncIterable<Uint8Array> {
    return this.req as AsyncIterable<Uint8Array>;
  }

  send(status: number, hdrs: OutgoingHeaders, body?: string | Uint8Array): void {
    if (this.aborted || this.responded) return;
    this.responded = true;
    this.status = status;
    const headers = headersOf(hdrs, this.#closing());
    const res = this.res;
    if (this.method === 'HEAD') {
      headers['content-length'] = String(headLength(hdrs, body));
      res.writeHead(status, headers).end();
    } else if (bodiless(status)) {
      res.writeHead(status, headers).end();
    } else {
      const payload = body ?? '';
      headers['content-length'] = String(typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength);
      res.writeHead(status, headers).end(payload);
    }
  }

  writeHead(status: number, hdrs: OutgoingHeaders): void {
    if (this.aborted || this.responded || this.#headSent) return;
    this.#headSent = true;
    this.status = status;
    this.#bodilessHead = bodiless(status) || this.method === 'HEAD';
    const headers = headersOf(hdrs, this.#closing());
    // A relayed length stays: it is the length of what follows.
    const length = hdrs['content-length'];
    if (typeof length === 'string') {
      headers['content-length'] = length;
      const n = Number(length);
      if (!this.#bodilessHead && Number.isSafeInteger(n)) this.#stated = n;
    }
    this.res.writeHead(status, headers);
  }

  write(chunk: Uint8Array): boolean {
    if (this.aborted || this.responded || this.#bodilessHead) return true;
    this.#written += chunk.byteLength;
    if (this.#stated !== null && this.#written > this.#stated) {
      // Past the stated length the bytes would be read as the client's next answer: the connection is cut instead.
      this.abort();
      return true;
    }
    // Node's response keeps the chunk until the socket took it, and the caller may reuse it (Exchange.write).
    return this.res.write(Buffer.from(chunk));
  }

  drained(): Promise<void> {
    const res = this.res;
    if (this.aborted || this.responded || !res.writableNeedDrain) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#drainWait = resolve;
      res.once('drain', () => { this.#drainWait = null; resolve(); });
    });
  }

  end(chunk?: Uint8Array): void {
    if (this.aborted || this.responded) return;
    if (this.#stated !== null && this.#written + (chunk && !this.#bodilessHead ? chunk.byteLength : 0) !== this.#stated) {
      // Short of its stated length (or past it) an answer cannot be finished honestly: the cut connection says so.
      this.abort();
      return;
    }
    this.responded = true;
    if (chunk && !this.#bodilessHead) this.res.end(chunk);
    else this.res.end();
  }

  abort(): void {
    if (this.aborted || this.responded) return;
    this.responded = true;
    this.res.destroy();
  }
}
