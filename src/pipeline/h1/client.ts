/**
 * The data plane's client for plain-HTTP upstreams: HTTP/1.1 on `net` sockets, kept alive, one
 * request at a time per connection. It does what undici does for a proxy with less per request
 * (bench/RESULTS.md, "Every observer on": undici's request object, header checks and handler
 * wrapping were a fifth of the data plane's thread): the head is one string written with the body
 * when it is small, the answer is read by ResponseParser into slices of the socket's buffers, and
 * timeouts are checked by one sweep per pool instead of a timer per request.
 *
 * It speaks undici's dispatch interface (the controller handler), so `relay` drives it and an
 * undici Pool alike; HTTPS upstreams and scheduled calls stay on undici. One difference: the chunk
 * `onResponseData` gets is a view of the connection's read window. It stays as it is during the
 * call and, when the handler pauses the answer, until it resumes (nothing is read while paused); a
 * handler that keeps it longer copies it (undici hands buffers of their own).
 *
 * Every header name and value is checked again here before it is written (a name that is not a
 * token, a value with CR, LF or NUL is refused): the pipeline builds them from what callers sent
 * and what operators configured, and a line break in either would split the request.
 */
import { connect, type Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { isFieldValue, isRequestTarget, isToken } from '../../http/grammar.ts';
import { CREDENTIAL_HEADERS } from '../../http/gateway-headers.ts';
import { ProtocolError, ResponseParser, type ParserSink } from './response-parser.ts';

export interface H1PoolOptions {
  /** Connections at most; requests beyond wait in order. */
  readonly connections: number;
  /** An idle connection is closed after this long (or the service's `Keep-Alive: timeout` less a second). */
  readonly keepAliveMs: number;
}

/** What `relay` hands a dispatcher (the part of undici's options this client takes). */
export interface H1Request {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | AsyncIterable<Uint8Array> | null | undefined;
  readonly headersTimeout: number;
  readonly bodyTimeout: number;
}

/** A failure with the code `upstreamFailure` (upstream.ts) reads. */
export class UpstreamError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
/** RFC 9110 9.2.2: what a client may send again when the connection failed before the answer. */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
/**
 * A request body up to this size is copied after the head into one buffer (from Node's shared
 * pool); a larger one goes in the same write as the head without a copy (corked, one writev).
 */
const JOIN_BODY = 2 * 1024;
const SWEEP_MS = 250;
/** What one read of an upstream connection takes at most. */
const WINDOW = 64 * 1024;
const CHUNK_END = Buffer.from('\r\n');
const LAST_CHUNK = Buffer.from('0\r\n\r\n');

/**
 * Where a connection's reads land: `onread` hands the bytes straight to the parser, without the
 * readable stream's machinery (bench/RESULTS.md: a tenth of the gateway's CPU a request). Every
 * read lands in the connection's one window, which the next read overwrites, and is handed on as
 * a view of it, not a copy: what the parser or a handler keeps past the call it copies itself
 * (see `onResponseData` below). A copy of every read was, on a 256 KiB answer, four fresh 64 KiB
 * buffers a request and the collector's work behind them (bench/RESULTS.md, "Borrowed reads").
 * (Reading into fresh windows of a slab instead, never copied, doubled the p99 latency.)
 */
class ReadWindow {
  readonly #window = Buffer.allocUnsafeSlow(WINDOW);

  /** The memory for the next read. */
  next(): Uint8Array {
    return this.#window;
  }

  /** The `n` bytes just read, valid until the next read. */
  view(n: number): Buffer {
    return this.#window.subarray(0, n);
  }
}

class Conn {
  idleSince = 0;
  idleLimit: number;
  /** Carried a request before: a failure before any byte of the answer may be a connection the service had just closed. */
  used = false;
  current: Exchange | null = null;
  dead = false;

  constructor(readonly socket: Socket, keepAliveMs: number) {
    this.idleLimit = keepAliveMs;
  }
}

type Phase = 'queued' | 'connecting' | 'waiting' | 'body' | 'done';

/**
 * One request on the pool: the dispatch controller its handler holds, and the sink its parser
 * reads the answer into (methods on the prototype, not a sink of closures per request).
 */
class Exchange implements Dispatcher.DispatchController, ParserSink {
  phase: Phase = 'queued';
  /** The request's head, made and checked once at dispatch (a second attempt sends the same). */
  requestHead = '';
  /** A streamed body's declared length; null: it goes in chunks (or the body is not streamed). */
  streamLength: number | null = null;
  conn: Conn | null = null;
  parser: ResponseParser;
  /**
   * Epoch ms: a free connection is due by then (phase queued: the wait counts toward the head's
   * time), the answer's head (phase waiting, once the body is sent), its next piece (phase body),
   * or the caller's reading again (paused). While a streamed body is still going out, its next
   * piece: a slow upload is not the service's slowness, a stalled one is cut.
   */
  deadline = 0;
  paused = false;
  requestSent = false;
  /** Counted among the connections held by a streamed body still going out (H1Pool.#uploading). */
  uploading = false;
  retried = false;
  /** The service's `Keep-Alive: timeout=` in ms, when it said one. */
  keepAliveHint: number | null = null;
  aborted = false;
  reason: Error | null = null;

  constructor(readonly pool: H1Pool, readonly req: H1Request, readonly handler: Dispatcher.DispatchHandler) {
    this.parser = this.#newParser();
  }

  #newParser(): ResponseParser {
    return new ResponseParser(this, this.req.method === 'HEAD');
  }

  // ParserSink
  head(status: number, headers: Record<string, string | string[]>): void {
    this.phase = 'body';
    const ka = headers['keep-alive'];
    const hint = typeof ka === 'string' ? /(?:^|[,;\s])timeout\s*=\s*(\d+)/i.exec(ka) : null;
    if (hint) this.keepAliveHint = Number(hint[1]) * 1000;
    this.deadline = this.pool.deadlineIn(this.req.bodyTimeout);
    this.handler.onResponseStart?.(this, status, headers as Record<string, string | string[] | undefined>, '');
  }

  data(chunk: Buffer): void {
    this.deadline = this.pool.deadlineIn(this.req.bodyTimeout);
    this.handler.onResponseData?.(this, chunk);
  }

  end(reusable: boolean): void {
    this.pool.ended(this, reusable && this.requestSent);
  }

  /** A fresh parser for a second attempt. */
  restart(): void {
    this.parser = this.#newParser();
    this.requestSent = false;
    this.deadline = 0;
  }

  // DispatchController
  abort(reason: Error): void {
    if (this.phase === 'done') return;
    this.aborted = true;
    this.reason = reason;
    this.pool.fail(this, reason, true);
  }

  pause(): void {
    if (this.paused || this.phase === 'done') return;
    this.paused = true;
    // A caller that stops reading holds the connection: not for longer than the service may pause.
    this.deadline = this.pool.deadlineIn(this.req.bodyTimeout);
    this.conn?.socket.pause();
  }

  resume(): void {
    if (!this.paused || this.phase === 'done') return;
    this.paused = false;
    this.deadline = this.pool.deadlineIn(this.req.bodyTimeout);
    this.conn?.socket.resume();
  }
}

/** Header lines of the last request a pool keeps for the next (`H1Pool`, its `#lines`). */
const LINES_KEPT = 32;

/** A body that goes out in pieces as the caller sends it (not one buffer read whole before the call). */
function isStreamed(body: H1Request['body']): boolean {
  return body != null && !(body instanceof Uint8Array);
}

export class H1Pool {
  readonly #host: string;
  readonly #port: number;
  /** The Host header: the origin's authority. */
  readonly #authority: string;
  readonly #opts: H1PoolOptions;
  readonly #idle: Conn[] = [];
  readonly #busy = new Set<Conn>();
  readonly #queue: Exchange[] = [];
  #connecting = 0;
  /**
   * Connections held, or being opened, for a streamed body still going out, and how many may be:
   * half the pool. A caller sends such a body as slowly as it likes, and a body that keeps moving
   * is never cut; without a share, a few callers uploading slowly could hold every connection to
   * the service while the others' requests waited. Past the share, a streamed body waits for one
   * of them to finish sending (its wait counts toward the answer's time, as any wait does).
   */
  #uploading = 0;
  readonly #uploadShare: number;
  #sweep: NodeJS.Timeout | null = null;
  /**
   * The time deadlines are counted from: read at each sweep and when the sweep starts, not at
   * each step of each request (four reads a request, about 75 ns each on a virtual machine's
   * clock; bench/RESULTS.md, "Fewer clock reads a request"). A deadline is this time plus the
   * limit plus one sweep, so it is never early: a timeout fires between its limit and its limit
   * plus two sweeps (half a second).
   */
  #now = 0;
  /**
   * The header lines of the last request by place, with the name and value each was made of.
   * Requests through one pool mostly carry the same headers in the same order (the same callers,
   * the gateway's forwarded and identity headers): a line is checked and made once, and reused
   * while the same name and value come at the same place (bench/RESULTS.md, "Where the access
   * log's cost lies, and pieces made once").
   */
  readonly #lineNames: string[] = [];
  readonly #lineValues: string[] = [];
  readonly #lines: string[] = [];
  #closed = false;
  #drained: (() => void) | null = null;

  constructor(origin: string, opts: H1PoolOptions) {
    const url = new URL(origin);
    if (url.protocol !== 'http:') throw new Error(`H1Pool speaks plain HTTP only, not ${url.protocol}`);
    this.#host = url.hostname.replace(/^\[|\]$/g, '');
    this.#port = url.port === '' ? 80 : Number(url.port);
    this.#authority = url.host;
    this.#opts = opts;
    this.#uploadShare = Math.max(1, Math.floor(opts.connections / 2));
  }

  dispatch(req: H1Request, handler: Dispatcher.DispatchHandler): boolean {
    const x = new Exchange(this, req, handler);
    if (this.#closed) {
      this.#settle(x, new UpstreamError('UPSTREAM_CLOSED', 'the connection pool is closed'));
      return false;
    }
    // Refused before any connection is taken: nothing was written, the connection stays good.
    try {
      this.#head(x);
    } catch (err) {
      this.#settle(x, err as Error);
      return false;
    }
    handler.onRequestStart?.(x, {});
    if (x.aborted) return true;
    this.#schedule(x);
    return true;
  }

  #schedule(x: Exchange): void {
    if (this.#mayStart(x)) {
      const conn = this.#idleConn();
      if (conn !== undefined) {
        this.#start(this.#counted(x, conn), x);
        return;
      }
      if (this.#busy.size + this.#connecting < this.#opts.connections) {
        this.#counted(x, null);
        this.#open(x);
        return;
      }
    }
    // Every connection busy: the wait counts toward the time the service has to answer, so a pool
    // held by callers that never read cannot keep the others waiting without end.
    this.#watch();
    x.deadline = this.deadlineIn(x.req.headersTimeout);
    this.#queue.push(x);
  }

  /** A streamed body may take a connection now: it is not past the uploads' share. */
  #mayStart(x: Exchange): boolean {
    return x.uploading || !isStreamed(x.req.body) || this.#uploading < this.#uploadShare;
  }

  /** Counts a streamed body among the uploads as it takes a connection; returns `conn`. */
  #counted<C>(x: Exchange, conn: C): C {
    if (!x.uploading && isStreamed(x.req.body)) {
      x.uploading = true;
      this.#uploading++;
    }
    return conn;
  }

  /** The body went out whole, or the exchange ended: a streamed body's place in the share is free. */
  #uploaded(x: Exchange): void {
    if (!x.uploading) return;
    x.uploading = false;
    this.#uploading--;
    this.#next();
  }

  /** An idle connection still good, or undefined. */
  #idleConn(): Conn | undefined {
    let conn: Conn | undefined;
    while ((conn = this.#idle.pop()) !== undefined) {
      if (!conn.dead && !conn.socket.destroyed && conn.socket.readyState === 'open') return conn;
      conn.socket.destroy();
    }
    return undefined;
  }

  /** The first waiting request that may start now, taken off the queue. */
  #takeNext(): Exchange | undefined {
    const at = this.#queue.findIndex((x) => this.#mayStart(x));
    return at < 0 ? undefined : this.#queue.splice(at, 1)[0];
  }

  #open(x: Exchange): void {
    x.phase = 'connecting';
    this.#connecting++;
    const reader = new ReadWindow();
    const socket = connect({
      host: this.#host,
      port: this.#port,
      noDelay: true,
      onread: {
        buffer: () => reader.next(),
        callback: (n) => {
          this.#read(conn, reader.view(n));
          return true;
        },
      },
    });
    const conn: Conn = new Conn(socket, this.#opts.keepAliveMs);
    let connected = false;
    // The listeners live as long as the connection: they hold the first request only until it is
    // started or failed, not its headers and body for the connection's life.
    let first: Exchange | null = x;
    socket.on('connect', () => {
      connected = true;
      this.#connecting--;
      socket.setKeepAlive(true, 60_000);
      const opened = first!;
      first = null;
      if (opened.phase !== 'connecting') {
        // Aborted while connecting: the connection serves the next one.
        this.#release(conn);
        return;
      }
      this.#start(conn, opened);
    });
    socket.on('end', () => this.#lost(conn, null));
    socket.on('error', (err) => {
      if (!connected) {
        this.#connecting--;
        connected = true;
        conn.dead = true;
        const opened = first!;
        first = null;
        if (opened.phase === 'connecting') this.fail(opened, err, false);
        this.#next();
        return;
      }
      this.#lost(conn, err);
    });
    socket.on('close', () => this.#lost(conn, null));
  }

  #start(conn: Conn, x: Exchange): void {
    conn.current = x;
    x.conn = conn;
    this.#busy.add(conn);
    // A request that waited for this connection keeps the deadline its wait began with.
    const queuedUntil = x.phase === 'queued' || x.phase === 'connecting' ? x.deadline : 0;
    x.phase = 'waiting';
    const body = x.req.body;
    // A streamed body's time is the caller's: while it moves, the head's clock waits until it is
    // sent (#stream); a body that stops moving for the answer's pause limit is cut.
    this.#watch();
    x.deadline = body != null && !(body instanceof Uint8Array) ? this.deadlineIn(x.req.bodyTimeout) : queuedUntil > 0 ? queuedUntil : this.deadlineIn(x.req.headersTimeout);
    if (x.paused) conn.socket.pause();
    else conn.socket.resume();
    const head = x.requestHead;
    const socket = conn.socket;
    if (body == null) {
      socket.write(head, 'latin1');
      x.requestSent = true;
    } else if (body instanceof Uint8Array) {
      if (body.byteLength <= JOIN_BODY) {
        socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
      } else {
        socket.cork();
        socket.write(head, 'latin1');
        socket.write(body);
        socket.uncork();
      }
      x.requestSent = true;
    } else {
      socket.write(head, 'latin1');
      void this.#stream(conn, x, body);
    }
  }

  /** Makes the request's head (`x.requestHead`, `x.streamLength`), each name and value checked where it is written. */
  #head(x: Exchange): void {
    const req = x.req;
    // What the caller sent and HTTP/1.1 cannot carry: the caller's to fix (a 400), not the service's failure.
    if (!isToken(req.method)) throw new UpstreamError('REQUEST_UNWRITABLE', `The method ${JSON.stringify(req.method)} is not an HTTP method: a method is made of letters, digits and !#$%&'*+.^_\`|~-.`);
    if (!req.path.startsWith('/') || !isRequestTarget(req.path)) throw new UpstreamError('REQUEST_UNWRITABLE', 'The path holds a space or a control character: percent-encode it.');
    let head = `${req.method} ${req.path} HTTP/1.1\r\nhost: ${this.#authority}\r\n`;
    const headers = req.headers;
    const names = this.#lineNames;
    const values = this.#lineValues;
    const lines = this.#lines;
    let declared: string | undefined;
    let at = 0;
    for (const name in headers) {
      const value = headers[name]!;
      if (name === 'content-length') {
        declared = value;
        continue;
      }
      // The line made for this very name and value at this place in the last request: checked then.
      if (at < LINES_KEPT && names[at] === name && values[at] === value) {
        head += lines[at]!;
        at += 1;
        continue;
      }
      if (!isToken(name) || !isFieldValue(value)) {
        throw new UpstreamError('REQUEST_UNWRITABLE', `The header ${JSON.stringify(name)} holds a control character or a character outside Latin-1, which HTTP/1.1 cannot carry to the service.`);
      }
      const line = `${name}: ${value}\r\n`;
      if (at < LINES_KEPT) {
        // A credential's place is kept empty, so a pool holds no caller's secret once its request
        // went out: the next request's line there is made afresh.
        const kept = !CREDENTIAL_HEADERS.has(name);
        names[at] = kept ? name : '';
        values[at] = kept ? value : '';
        lines[at] = kept ? line : '';
      }
      head += line;
      at += 1;
    }
    // The framing is the body's own: its length, the length declared for a stream, or chunks.
    const body = req.body;
    if (body == null) {
      if (METHODS_WITH_BODY.has(req.method)) head += 'content-length: 0\r\n';
    } else if (body instanceof Uint8Array) {
      head += `content-length: ${body.byteLength}\r\n`;
    } else if (declared !== undefined && /^[0-9]{1,15}$/.test(declared)) {
      head += `content-length: ${declared}\r\n`;
      x.streamLength = Number(declared);
    } else {
      head += 'transfer-encoding: chunked\r\n';
    }
    x.requestHead = `${head}\r\n`;
  }

  async #stream(conn: Conn, x: Exchange, body: AsyncIterable<Uint8Array>): Promise<void> {
    const length = x.streamLength;
    const socket = conn.socket;
    let sent = 0;
    try {
      for await (const chunk of body) {
        if (x.phase === 'done' || conn.current !== x) return;
        if (chunk.byteLength === 0) continue;
        sent += chunk.byteLength;
        if (x.phase === 'waiting') x.deadline = this.deadlineIn(x.req.bodyTimeout);
        if (length !== null && sent > length) throw new UpstreamError('UPSTREAM_REQUEST', 'the request body is longer than its Content-Length');
        let ok: boolean;
        if (length !== null) ok = socket.write(chunk);
        else {
          socket.cork();
          socket.write(`${chunk.byteLength.toString(16)}\r\n`, 'latin1');
          socket.write(chunk);
          ok = socket.write(CHUNK_END);
          socket.uncork();
        }
        if (!ok) await drainOf(socket);
      }
      if (x.phase === 'done' || conn.current !== x) return;
      if (length !== null && sent !== length) throw new UpstreamError('UPSTREAM_REQUEST', 'the request body is shorter than its Content-Length');
      if (length === null) socket.write(LAST_CHUNK);
      x.requestSent = true;
      this.#uploaded(x);
      if (x.phase === 'waiting') x.deadline = this.deadlineIn(x.req.headersTimeout);
    } catch (err) {
      // The caller's body failed (it went away) or was not what it declared: the connection cannot go on.
      if (x.phase !== 'done') this.fail(x, err as Error, false);
    }
  }

  #read(conn: Conn, d: Buffer): void {
    const x = conn.current;
    if (x === null) {
      // Bytes nobody asked for on an idle connection.
      conn.dead = true;
      conn.socket.destroy();
      return;
    }
    try {
      x.parser.execute(d);
    } catch (err) {
      this.fail(x, err as Error, false);
    }
  }

  /** The connection ended or failed. */
  #lost(conn: Conn, err: Error | null): void {
    if (conn.dead && conn.current === null) return;
    conn.dead = true;
    const x = conn.current;
    if (x === null) {
      this.#forget(conn);
      return;
    }
    if (!err) {
      if (!x.parser.started) err = new UpstreamError('UPSTREAM_CLOSED', 'the connection closed before any answer');
      else {
        try {
          x.parser.closed();
          return;
        } catch (e) {
          err = e as Error;
        }
      }
    }
    // A kept connection the service closed as the request went out: sent again once on a new one
    // when nothing of the answer came, the body can be sent again, and the method is idempotent.
    // A POST or PATCH is never sent twice (RFC 9110 9.2.2): the service may have acted on it
    // before it closed, and a second payment is worse than a 502.
    if (conn.used && !x.parser.started && !x.retried && !x.aborted && IDEMPOTENT.has(x.req.method) && !(x.req.body != null && !(x.req.body instanceof Uint8Array))) {
      x.retried = true;
      conn.current = null;
      x.conn = null;
      this.#forget(conn);
      x.restart();
      this.#schedule(x);
      return;
    }
    this.fail(x, err, false);
  }

  /** Told by the parser: the answer is complete. */
  ended(x: Exchange, reusable: boolean): void {
    if (x.phase === 'done') return;
    x.phase = 'done';
    this.#uploaded(x);
    const conn = x.conn!;
    conn.current = null;
    x.conn = null;
    if (!reusable || conn.dead) {
      conn.dead = true;
      conn.socket.destroy();
      this.#forget(conn);
    } else {
      conn.used = true;
      // A connection the service keeps for less than ours is let go a second before it would close it.
      conn.idleLimit = x.keepAliveHint === null ? this.#opts.keepAliveMs : Math.min(this.#opts.keepAliveMs, x.keepAliveHint - 1000);
      if (x.paused) conn.socket.resume();
      this.#release(conn);
    }
    x.handler.onResponseEnd?.(x, {});
  }

  /** The request failed: its connection is closed (it cannot be trusted mid-exchange) and the handler told. */
  fail(x: Exchange, err: Error, abort: boolean): void {
    if (x.phase === 'done') return;
    const phase = x.phase;
    x.phase = 'done';
    this.#uploaded(x);
    const conn = x.conn;
    if (conn !== null) {
      conn.current = null;
      x.conn = null;
      conn.dead = true;
      conn.socket.destroy();
      this.#forget(conn);
    } else if (phase === 'queued') {
      const at = this.#queue.indexOf(x);
      if (at >= 0) this.#queue.splice(at, 1);
    }
    this.#settle(x, abort ? err : toUpstreamError(err));
  }

  #settle(x: Exchange, err: Error): void {
    x.phase = 'done';
    x.handler.onResponseError?.(x, err);
  }

  #release(conn: Conn): void {
    this.#busy.delete(conn);
    const next = this.#takeNext();
    if (next !== undefined) {
      this.#start(this.#counted(next, conn), next);
      return;
    }
    // The sweep's time: up to SWEEP_MS early, so an idle connection is let go early, never late.
    conn.idleSince = this.#now;
    this.#idle.push(conn);
    this.#idleCheck();
  }

  #forget(conn: Conn): void {
    this.#busy.delete(conn);
    const at = this.#idle.indexOf(conn);
    if (at >= 0) this.#idle.splice(at, 1);
    this.#next();
    this.#idleCheck();
  }

  /** A place freed: the first waiting request gets a new connection. */
  #next(): void {
    if (this.#queue.length === 0 || this.#closed) return;
    // An upload's place freed while connections sit idle: a waiting upload takes one of them.
    const conn = this.#idle.length > 0 ? this.#idleConn() : undefined;
    if (conn !== undefined) {
      const x = this.#takeNext();
      if (x !== undefined) this.#start(this.#counted(x, conn), x);
      else this.#idle.push(conn);
      return;
    }
    if (this.#busy.size + this.#connecting >= this.#opts.connections) return;
    const x = this.#takeNext();
    if (x !== undefined) this.#open(this.#counted(x, x));
  }

  #idleCheck(): void {
    if (this.#drained !== null && this.#busy.size === 0 && this.#connecting === 0 && this.#queue.length === 0) {
      for (const c of this.#idle.splice(0)) c.socket.destroy();
      this.#drained();
      this.#drained = null;
    }
    if (this.#busy.size === 0 && this.#idle.length === 0 && this.#queue.length === 0 && this.#sweep !== null) {
      clearInterval(this.#sweep);
      this.#sweep = null;
    }
  }

  /** The deadline `ms` from now, as the sweep counts it (see #now). */
  deadlineIn(ms: number): number {
    return this.#now + ms + SWEEP_MS;
  }

  /** Starts the sweep when it is not running, with the time read afresh. */
  #watch(): void {
    if (this.#sweep !== null) return;
    this.#now = Date.now();
    this.#sweep = setInterval(() => this.#check(), SWEEP_MS).unref();
  }

  /** Timeouts, and idle connections past their keep-alive. */
  #check(): void {
    const now = Date.now();
    this.#now = now;
    for (const conn of this.#busy) {
      const x = conn.current;
      if (x === null || now < x.deadline) continue;
      if (x.paused) this.fail(x, new UpstreamError('CLIENT_STALLED', 'the caller stopped reading the answer'), false);
      else if (x.phase === 'waiting' && !x.requestSent) this.fail(x, new UpstreamError('REQUEST_STALLED', 'the request body stopped moving'), false);
      else if (x.phase === 'waiting') this.fail(x, new UpstreamError('UPSTREAM_HEADERS_TIMEOUT', 'no answer in time'), false);
      else if (x.phase === 'body') this.fail(x, new UpstreamError('UPSTREAM_BODY_TIMEOUT', 'the answer stopped'), false);
    }
    for (let i = this.#queue.length - 1; i >= 0; i--) {
      const x = this.#queue[i]!;
      if (now < x.deadline) continue;
      this.#queue.splice(i, 1);
      this.#settle(x, new UpstreamError('UPSTREAM_QUEUE_TIMEOUT', `every one of the ${this.#opts.connections} connections to the service stayed busy`));
    }
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const c = this.#idle[i]!;
      if (now - c.idleSince >= c.idleLimit) {
        this.#idle.splice(i, 1);
        c.dead = true;
        c.socket.destroy();
      }
    }
    this.#idleCheck();
  }

  /** No new request; resolves once those in flight ended. */
  close(): Promise<void> {
    this.#closed = true;
    return new Promise<void>((resolve) => {
      this.#drained = resolve;
      this.#idleCheck();
    });
  }

  /** Cuts every connection now. */
  async destroy(): Promise<void> {
    this.#closed = true;
    for (const x of this.#queue.splice(0)) this.#settle(x, new UpstreamError('UPSTREAM_CLOSED', 'the gateway is stopping'));
    for (const conn of [...this.#busy]) {
      const x = conn.current;
      if (x !== null) this.fail(x, new UpstreamError('UPSTREAM_CLOSED', 'the gateway is stopping'), false);
    }
    for (const c of this.#idle.splice(0)) c.socket.destroy();
    if (this.#sweep !== null) clearInterval(this.#sweep);
    this.#sweep = null;
    this.#drained?.();
    this.#drained = null;
  }
}

function drainOf(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

/** A failure keeps its system code (ECONNREFUSED …); a protocol fault says what the service did. */
function toUpstreamError(err: Error): Error {
  if (err instanceof ProtocolError) return new UpstreamError('UPSTREAM_PROTOCOL', `the service's answer cannot be read: ${err.message}`);
  return err;
}
