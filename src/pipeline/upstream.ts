/**
 * The call to the upstream: one undici Pool per origin (keep-alive), the request body streamed
 * on (small bodies sent in one piece), the answer streamed back with back-pressure. Failures
 * become the sentences a person reads: 502 when the service cannot be reached or its certificate
 * does not pass, 504 when it does not answer in time.
 */
import { Pool, type Dispatcher } from 'undici';
import type { SecureContext } from 'node:tls';
import type { Readable } from 'node:stream';
import { GatewayError } from '../http/errors.ts';
import type { Exchange, OutgoingHeaders } from '../http/exchange.ts';
import { forwardResponseHeaders } from './forward-headers.ts';
import type { RequestRecord } from './request-record.ts';
import { UpstreamHealth, type HealthReport } from './upstream-health.ts';
import { certificateFailure, trustContext } from './upstream-tls.ts';

/** Answers up to this size are collected and sent in one write (one syscall, a Content-Length). */
const COLLECT_LIMIT = 64 * 1024;
/** Request bodies up to this size are read whole before the call; larger ones stream. */
const SMALL_BODY = 64 * 1024;

export class UpstreamPools {
  readonly #pools = new Map<string, Pool>();
  #authorities: readonly string[];
  #trust: SecureContext | undefined;
  /** Which services stopped answering, said once each way on the operational log. */
  readonly health: UpstreamHealth;

  constructor(authorities: readonly string[] = [], onHealth?: HealthReport) {
    this.#authorities = authorities;
    this.health = new UpstreamHealth(onHealth);
  }

  get(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      const tls = origin.startsWith('https:') ? { connect: { secureContext: this.#trust ??= trustContext(this.#authorities) } } : {};
      pool = new Pool(origin, { connections: 128, keepAliveTimeout: 30_000, pipelining: 1, ...tls });
      this.#pools.set(origin, pool);
    }
    return pool;
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
  }

  /**
   * At stop, after the doors drained: what is still open belongs to scheduled calls, which the
   * scheduler has handed over to other nodes, so connections are cut rather than awaited.
   */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export interface UpstreamCall {
  readonly pool: Pool;
  readonly health: UpstreamHealth;
  /** The upstream's origin, for sentences. */
  readonly origin: string;
  readonly method: string;
  /** Path and query as sent upstream. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly timeoutMs: number;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);

/** The refusal for a failure before any byte of the answer went out, told to the health watch. */
export function failure(err: unknown, call: UpstreamCall): GatewayError {
  const refusal = upstreamFailure(err, call);
  call.health.failed(call.origin, refusal);
  return refusal;
}

/** The refusal for an upstream failure before any byte of the answer went out. */
export function upstreamFailure(err: unknown, call: Pick<UpstreamCall, 'origin' | 'timeoutMs'>): GatewayError {
  const code = (err as { code?: string }).code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new GatewayError('upstream.timeout', `The service at ${call.origin} did not answer within ${call.timeoutMs / 1000} s.`);
  }
  if (UNREACHABLE.has(code)) {
    return new GatewayError('upstream.unreachable', `The service at ${call.origin} cannot be reached (${code === 'ENOTFOUND' ? 'its host name does not resolve' : code === 'ECONNREFUSED' ? 'connection refused' : code.toLowerCase()}).`);
  }
  const certificate = certificateFailure(code, call.origin);
  if (certificate) return certificate;
  return new GatewayError('upstream.failed', `The call to ${call.origin} failed: ${(err as Error).message ?? String(err)}.`);
}

async function requestBody(ex: Exchange, record: RequestRecord | undefined): Promise<Dispatcher.DispatchOptions['body']> {
  if (ex.method === 'GET' || ex.method === 'HEAD') return null;
  const length = ex.headers['content-length'];
  if (length !== undefined) {
    const n = Number(length);
    if (n === 0) return null;
    if (n <= SMALL_BODY) {
      const whole = await ex.readBody(SMALL_BODY);
      if (record !== undefined && record.bodyLimit > 0) record.keep(whole, true);
      return whole;
    }
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

/** The body streamed on as it arrives, its first bytes kept aside for the request's record. */
async function* keptAside(body: AsyncIterable<Uint8Array>, record: RequestRecord): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    record.keep(chunk, false);
    yield chunk;
  }
  record.keep(EMPTY, true);
}
const EMPTY = new Uint8Array(0);

/**
 * Sends the call and relays the answer to `ex`. Resolves when the answer is complete; rejects
 * with a GatewayError only while nothing has been sent to the client yet. `record`, when the
 * request has one, learns the status sent and the bytes, and keeps the body's first bytes aside
 * when an observer asked (`bodyLimit`); the body still streams on untouched.
 */
export async function relay(ex: Exchange, call: UpstreamCall, record?: RequestRecord): Promise<void> {
  const body = await requestBody(ex, record);
  await new Promise<void>((resolve, reject) => {
    let status = 0;
    let headers: OutgoingHeaders = {};
    let collected: Buffer[] | undefined;
    let collectedSize = 0;
    let streaming = false;
    let settled = false;
    const done = (err?: unknown) => {
      if (settled) return;
      settled = true;
      if (err === undefined) resolve();
      else reject(err);
    };

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        ex.onAbort(() => controller.abort(new Error('the client went away')));
      },
      onResponseStart(_controller, statusCode, upstreamHeaders) {
        if (statusCode < 200) return;
        status = statusCode;
        call.health.answered(call.origin);
        if (record !== undefined) record.upstreamAnswered = true;
        headers = forwardResponseHeaders(upstreamHeaders as Record<string, string | string[] | undefined>);
        const length = Number(upstreamHeaders['content-length'] ?? Number.NaN);
        if (ex.method === 'HEAD' || (length >= 0 && length <= COLLECT_LIMIT)) {
          collected = [];
        } else {
          streaming = true;
          if (record !== undefined && !ex.aborted) record.status = status;
          ex.writeHead(status, headers);
        }
      },
      onResponseData(controller, chunk) {
        // undici hands an empty chunk on resume: nothing to relay.
        if (chunk.byteLength === 0) return;
        if (record !== undefined) record.bytesOut += chunk.byteLength;
        if (collected) {
          collected.push(chunk);
          collectedSize += chunk.byteLength;
          if (collectedSize > COLLECT_LIMIT) {
            // The service sent more than it declared: stream the rest.
            streaming = true;
            if (record !== undefined && !ex.aborted) record.status = status;
            ex.writeHead(status, headers);
            for (const c of collected) ex.write(c);
            collected = undefined;
          }
          return;
        }
        // Pause the upstream only while the client is behind.
        if (!ex.write(chunk)) {
          controller.pause();
          void ex.drained().then(() => controller.resume());
        }
      },
      onResponseEnd() {
        if (streaming) ex.end();
        else {
          if (record !== undefined && !ex.aborted) record.status = status;
          ex.send(status, headers, collected && collected.length > 0 ? Buffer.concat(collected, collectedSize) : undefined);
        }
        done();
      },
      onResponseError(_controller, err) {
        if (!streaming && !ex.responded) {
          done(ex.aborted ? undefined : failure(err, call));
          return;
        }
        // Part of the answer went out: the only honest signal left is to cut the connection.
        if (record !== undefined) record.outcome = 'aborted';
        ex.abort();
        done();
      },
    };

    call.pool.dispatch({
      path: call.path,
      method: call.method as Dispatcher.HttpMethod,
      headers: call.headers,
      body,
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
    }, handler);
  });
}
