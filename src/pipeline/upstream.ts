/**
 * The call to the upstream: per plain-HTTP origin one H1Pool (h1/client.ts) for the data plane's
 * relay, per origin one undici Pool for HTTPS and for scheduled calls (keep-alive), the request body streamed
 * on (small bodies sent in one piece), the answer streamed back with back-pressure. Failures
 * become the sentences a person reads: 502 when the service cannot be reached or its certificate
 * does not pass, 504 when it does not answer in time.
 */
import { randomBytes } from 'node:crypto';
import { Pool, type Dispatcher } from 'undici';
import type { SecureContext } from 'node:tls';
import type { Readable } from 'node:stream';
import { GatewayError } from '../http/errors.ts';
import type { Exchange, OutgoingHeaders } from '../http/exchange.ts';
import { forwardResponseHeaders } from './forward-headers.ts';
import type { RequestRecord } from './request-record.ts';
import { UpstreamHealth, type HealthReport } from './upstream-health.ts';
import { certificateFailure, trustContext } from './upstream-tls.ts';
import { H1Pool, type H1Request } from './h1/client.ts';

/** Answers up to this size are collected and sent in one write (one syscall, a Content-Length). */
const COLLECT_LIMIT = 64 * 1024;
/** Request bodies up to this size are read whole before the call; larger ones stream. */
const SMALL_BODY = 64 * 1024;
/** Connections per origin at most, and how long an idle one is kept: the same for both clients. */
const CONNECTIONS = 128;
const KEEP_ALIVE_MS = 30_000;

/** What relays a data-plane request: an H1Pool, or an undici Pool for an HTTPS origin. */
export interface RelayClient {
  dispatch(req: H1Request, handler: Dispatcher.DispatchHandler): boolean;
}

export class UpstreamPools {
  readonly #pools = new Map<string, Pool>();
  readonly #clients = new Map<string, H1Pool>();
  #authorities: readonly string[];
  #trust: SecureContext | undefined;
  /** Which services stopped answering, said once each way on the operational log. */
  readonly health: UpstreamHealth;
  /**
   * How this gateway names itself in the Via header of the calls it sends (RFC 9110 7.6.3): a
   * pseudonym drawn at each start, so that a request coming back carrying it is a loop
   * (`route.loop`), and a service learns nothing of the host it runs on.
   */
  readonly hop = `meerkat-${randomBytes(4).toString('hex')}`;
  /** The Via entry itself, naming the version the request came in (RFC 9110 7.6.3): HTTP/1.1 ... */
  readonly via = `1.1 ${this.hop}`;
  /** ... or HTTP/1.0, which the HTTPS doors take. */
  readonly via10 = `1.0 ${this.hop}`;

  constructor(authorities: readonly string[] = [], onHealth?: HealthReport) {
    this.#authorities = authorities;
    this.health = new UpstreamHealth(onHealth);
  }

  get(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      const tls = origin.startsWith('https:') ? { connect: { secureContext: this.#trust ??= trustContext(this.#authorities) } } : {};
      pool = new Pool(origin, { connections: CONNECTIONS, keepAliveTimeout: KEEP_ALIVE_MS, pipelining: 1, ...tls });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  /** The data plane's client for the origin: its own HTTP/1.1 pool for http, undici's for https. */
  client(origin: string): RelayClient {
    let client = this.#clients.get(origin);
    if (client) return client;
    // undici's Pool takes the same dispatch options and handler (H1Request is a part of them).
    if (origin.startsWith('https:')) return this.get(origin) as unknown as RelayClient;
    client = new H1Pool(origin, { connections: CONNECTIONS, keepAliveMs: KEEP_ALIVE_MS });
    this.#clients.set(origin, client);
    return client;
  }

  /**
   * Sets the trusted authorities. When they changed, every https pool is let go: new requests
   * open new pools under the new set (a kept connection, or a resumed TLS session, would
   * otherwise go on under the old one), and each old pool closes once its requests in flight end.
   */
  trust(authorities: readonly string[]): void {
    if (sameList(authorities, this.#authorities)) return;
    this.#authorities = authorities;
    this.#trust = undefined;
    for (const [origin, pool] of this.#pools) {
      if (!origin.startsWith('https:')) continue;
      this.#pools.delete(origin);
      void pool.close().catch(() => undefined);
    }
  }

  /** Closes the pools of origins no route uses any more (their requests in flight finish first). */
  retain(origins: ReadonlySet<string>): void {
    for (const [origin, pool] of this.#pools) {
      if (origins.has(origin)) continue;
      this.#pools.delete(origin);
      void pool.close().catch(() => undefined);
    }
    for (const [origin, client] of this.#clients) {
      if (origins.has(origin)) continue;
      this.#clients.delete(origin);
      void client.close();
    }
  }

  /**
   * At stop, after the doors drained: what is still open belongs to scheduled calls, which the
   * scheduler has handed over to other nodes, so connections are cut rather than awaited.
   */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    const clients = [...this.#clients.values()];
    this.#pools.clear();
    this.#clients.clear();
    await Promise.all([...pools.map((p) => p.destroy().catch(() => undefined)), ...clients.map((c) => c.destroy())]);
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export interface UpstreamCall {
  /**
   * The clients of every origin: the relay takes `client(origin)`, a scheduled call `get(origin)`
   * (collect.ts), each made only when a call of its kind goes to the origin.
   */
  readonly pools: UpstreamPools;
  readonly health: UpstreamHealth;
  /** The upstream's origin, for sentences. */
  readonly origin: string;
  readonly method: string;
  /** Path and query as sent upstream. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly timeoutMs: number;
  /** Cookie names of the gateway's own sessions: an answer never sets them for the client. */
  readonly ownCookies?: ReadonlySet<string>;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UPSTREAM_CLOSED']);
const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UPSTREAM_HEADERS_TIMEOUT', 'UPSTREAM_BODY_TIMEOUT']);
/** What the parenthesis of an unreachable service says, by code (others: the code in lower case). */
const UNREACHABLE_WHY: Readonly<Record<string, string>> = {
  ENOTFOUND: 'its host name does not resolve',
  ECONNREFUSED: 'connection refused',
  UPSTREAM_CLOSED: 'it closed the connection without answering',
};

/** The refusal for a failure before any byte of the answer went out, told to the health watch. */
export function failure(err: unknown, call: UpstreamCall): GatewayError {
  const refusal = upstreamFailure(err, call);
  // A pool held busy (callers that do not read their answers) says nothing of the service's health.
  if ((err as { code?: string }).code !== 'UPSTREAM_QUEUE_TIMEOUT') call.health.failed(call.origin, refusal);
  return refusal;
}

/** The refusal for an upstream failure before any byte of the answer went out. */
export function upstreamFailure(err: unknown, call: Pick<UpstreamCall, 'origin' | 'timeoutMs'>): GatewayError {
  const code = (err as { code?: string }).code ?? '';
  // The request as the caller sent it cannot be written toward the service (its own client's
  // check; undici's for an https service): refused, and never counted against the service.
  if (code === 'REQUEST_UNWRITABLE') return new GatewayError('request.invalid', (err as Error).message);
  if (code === 'UND_ERR_INVALID_ARG') return new GatewayError('request.invalid', `The request cannot be sent on to the service: ${(err as Error).message}.`);
  if (code === 'UPSTREAM_QUEUE_TIMEOUT') {
    return new GatewayError('upstream.timeout', `Every connection to the service at ${call.origin} stayed busy for ${call.timeoutMs / 1000} s; none came free for this request.`);
  }
  if (TIMEOUTS.has(code)) {
    return new GatewayError('upstream.timeout', `The service at ${call.origin} did not answer within ${call.timeoutMs / 1000} s.`);
  }
  if (UNREACHABLE.has(code)) {
    return new GatewayError('upstream.unreachable', `The service at ${call.origin} cannot be reached (${UNREACHABLE_WHY[code] ?? code.toLowerCase()}).`);
  }
  const certificate = certificateFailure(code, call.origin);
  if (certificate) return certificate;
  return new GatewayError('upstream.failed', `The call to ${call.origin} failed: ${(err as Error).message ?? String(err)}.`);
}

type RequestBody = Dispatcher.DispatchOptions['body'];

/** The body to send on: none, a stream, or a promise of a small body read whole (the only wait). */
function requestBody(ex: Exchange, record: RequestRecord | undefined): RequestBody | Promise<RequestBody> {
  if (ex.method === 'GET' || ex.method === 'HEAD') return null;
  const length = ex.headers['content-length'];
  if (length !== undefined) {
    const n = Number(length);
    if (n === 0) return null;
    if (n <= SMALL_BODY) return readSmall(ex, record);
    if (record !== undefined && record.bodyLimit > 0) {
      // Declared larger than the copy asked for: nothing is kept aside, nothing is wrapped.
      if (n > record.bodyLimit) record.tooLarge(n);
      else return keptAside(ex.bodyStream(), record) as unknown as Readable;
    }
  } else if (ex.headers['transfer-encoding'] === undefined) {
    return null;
  } else if (record !== undefined && record.bodyLimit > 0) {
    return keptAside(ex.bodyStream(), record) as unknown as Readable;
  }
  // undici streams any async iterable; the type only names Readable.
  return ex.bodyStream() as unknown as Readable;
}

async function readSmall(ex: Exchange, record: RequestRecord | undefined): Promise<RequestBody> {
  const whole = await ex.readBody(SMALL_BODY);
  if (record !== undefined && record.bodyLimit > 0) record.keep(whole, true);
  return whole;
}

/** The body streamed on as it arrives, its first bytes kept aside for the request's record. */
async function* keptAside(body: AsyncIterable<Uint8Array>, record: RequestRecord): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    record.keep(chunk, false);
    yield chunk;
  }
  record.keep(EMPTY, true);
}
const EMPTY = new Uint8Array(0);

/** Until the answer's head comes: shared, never written (the head's own record replaces it). */
const NO_HEADERS: OutgoingHeaders = Object.freeze({});

/**
 * One relayed answer: the dispatcher's handler. A class, one object per call, rather than a
 * handler of closures and their context made for every request (bench/RESULTS.md, "The floor").
 */
class RelayHandler implements Dispatcher.DispatchHandler {
  private status = 0;
  private headers: OutgoingHeaders = NO_HEADERS;
  /**
   * The answer's body, kept until its end when it is small enough to go in one write: copies, as
   * the H1Pool's chunks are views of a read window the next read overwrites.
   */
  private collected: Buffer[] | undefined = undefined;
  private collectedSize = 0;
  private streaming = false;
  private settled = false;
  private controller: Dispatcher.DispatchController | null = null;

  constructor(
    private readonly ex: Exchange,
    private readonly call: UpstreamCall,
    private readonly record: RequestRecord | undefined,
    private readonly end: RelayEnd,
  ) {}

  private done(err?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.end.relayEnded(this.ex, this.record, err);
  }

  /** The client went away: the call is abandoned. */
  private clientLeft(): void {
    this.controller?.abort(new Error('the client went away'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.ex.onAbort(() => this.clientLeft());
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, upstreamHeaders: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return;
    const { ex, record } = this;
    this.status = statusCode;
    this.call.health.answered(this.call.origin);
    if (record !== undefined) record.upstreamAnswered = true;
    this.headers = forwardResponseHeaders(upstreamHeaders, this.call.ownCookies);
    const length = Number(upstreamHeaders['content-length'] ?? Number.NaN);
    if (ex.method === 'HEAD' || (length >= 0 && length <= COLLECT_LIMIT)) {
      this.collected = [];
    } else {
      this.streaming = true;
      if (record !== undefined && !ex.aborted) record.status = statusCode;
      ex.writeHead(statusCode, this.headers);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    // undici hands an empty chunk on resume: nothing to relay.
    if (chunk.byteLength === 0) return;
    const { ex, record } = this;
    if (record !== undefined) record.bytesOut += chunk.byteLength;
    const collected = this.collected;
    if (collected) {
      collected.push(Buffer.from(chunk));
      this.collectedSize += chunk.byteLength;
      if (this.collectedSize > COLLECT_LIMIT) {
        // The service sent more than it declared: stream the rest.
        this.streaming = true;
        if (record !== undefined && !ex.aborted) record.status = this.status;
        ex.writeHead(this.status, this.headers);
        for (const c of collected) ex.write(c);
        this.collected = undefined;
      }
      return;
    }
    // Pause the upstream only while the client is behind. After false the exchange may keep the
    // chunk, a view of the client's read window, until drained: nothing is read until then.
    if (!ex.write(chunk)) {
      controller.pause();
      void ex.drained().then(() => controller.resume());
    }
  }

  onResponseEnd(): void {
    const { ex, record } = this;
    if (this.streaming) ex.end();
    else {
      if (record !== undefined && !ex.aborted) record.status = this.status;
      const collected = this.collected;
      ex.send(this.status, this.headers, collected === undefined || collected.length === 0 ? undefined : collected.length === 1 ? collected[0] : Buffer.concat(collected, this.collectedSize));
    }
    this.done();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    const { ex, record } = this;
    if (!this.streaming && !ex.responded) {
      this.done(ex.aborted ? undefined : failure(err, this.call));
      return;
    }
    // Part of the answer went out: the only honest signal left is to cut the connection.
    if (record !== undefined) record.outcome = 'aborted';
    ex.abort();
    this.done();
  }
}

/**
 * Told once when a relayed answer is over: `err` is a GatewayError only while nothing was sent to
 * the client yet (it is then the caller's to answer). One object per plane, not per request.
 */
export interface RelayEnd {
  relayEnded(ex: Exchange, record: RequestRecord | undefined, err?: unknown): void;
}

/**
 * Sends the call and relays the answer to `ex`, then tells `end`. `record`, when the request has
 * one, learns the status sent and the bytes, and keeps the body's first bytes aside when an
 * observer asked (`bodyLimit`); the body still streams on untouched. No promise is made for a
 * request without a body: it is sent in the same turn, and its end told by the handler (each
 * promise and await on this path measured, bench/RESULTS.md "The floor").
 */
export function relayTo(ex: Exchange, call: UpstreamCall, record: RequestRecord | undefined, end: RelayEnd): void {
  const body = requestBody(ex, record);
  if (!(body instanceof Promise)) {
    // A throw here reaches the caller, who answers it.
    send(ex, call, record, body, end);
    return;
  }
  // After the wait nobody is left to catch a throw: the end is told instead.
  body.then((b) => {
    try {
      send(ex, call, record, b, end);
    } catch (err) {
      end.relayEnded(ex, record, err);
    }
  }, (err: unknown) => end.relayEnded(ex, record, err));
}

/** `relayTo` as a promise: resolves when the answer is complete, rejects as `relayEnded` is told an error. */
export function relay(ex: Exchange, call: UpstreamCall, record?: RequestRecord): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    relayTo(ex, call, record, { relayEnded: (_ex, _record, err) => (err === undefined ? resolve() : reject(err)) });
  });
}

function send(ex: Exchange, call: UpstreamCall, record: RequestRecord | undefined, body: RequestBody, end: RelayEnd): void {
  call.pools.client(call.origin).dispatch({
    path: call.path,
    method: call.method,
    headers: call.headers,
    body: body as H1Request['body'],
    headersTimeout: call.timeoutMs,
    bodyTimeout: call.timeoutMs,
  }, new RelayHandler(ex, call, record, end));
}
