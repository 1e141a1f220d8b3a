/**
 * The HTTPS doors, on node:tls. They build the same Exchange as the uWS plain doors, so the plane
 * handlers serve both unchanged, and apply the same answer rules (answer-rules.ts). Each
 * connection's ClientHello is read first (client-hello.ts): the resolver chooses the certificate
 * for the server name asked (none: the plane's fallback), and the handshake starts with exactly
 * that one, so a swap changes what new handshakes get while open connections keep theirs.
 * node:http then serves the TLS socket; WebSocket routes go through `ws` (tls-sockets.ts).
 */
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { TLSSocket, type SecureContext } from 'node:tls';
import { formatAddress } from '../settings/address.ts';
import { GatewayError } from './errors.ts';
import { headerRecord } from './header-record.ts';
import type { Exchange, OutgoingHeaders } from './exchange.ts';
import { CLOSING, bodiless, doorOwned, headLength } from './answer-rules.ts';
import { DoorBindError, type Door, type DoorOptions } from './uws-door.ts';
import { InFlight } from './in-flight.ts';
import { serveTlsSockets } from './tls-sockets.ts';
import { doorContext } from './door-context.ts';
import { peerAddress, readNodeHeaders } from './node-request.ts';
import { isAmbiguousFraming } from './request-framing.ts';
import { MAX_HELLO_BYTES, readClientHello } from './client-hello.ts';

/** RFC 8737: the protocol an ACME authority offers alone to validate a name over TLS. */
const ACME_TLS_ALPN = 'acme-tls/1';
/** A client that has not finished its handshake by then is cut off. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

/** Alert descriptions (RFC 8446 section 6.2) the door refuses a handshake with. */
const ALERT = { handshakeFailure: 40, decodeError: 50, unrecognizedName: 112, noApplicationProtocol: 120 } as const;

/** The local address a connection reached, as a certificate's IP entry writes it (no IPv4-mapped prefix). */
function addressCalled(raw: Socket): string | undefined {
  const local = raw.localAddress;
  if (local === undefined || local === '') return undefined;
  return local.startsWith('::ffff:') && local.includes('.') ? local.slice(7) : local;
}

export interface TlsDoorOptions extends DoorOptions {
  /**
   * The context for a handshake that asked `serverName` (undefined: it named none, rule 9's
   * fallback); an Error refuses it, and says why.
   */
  readonly resolve: (serverName: string | undefined) => SecureContext | Error;
  /** Told when a handshake is refused, for the operational log. */
  readonly onHandshakeError?: (err: Error, serverName: string | undefined) => void;
  /** The TLS-ALPN-01 answer (RFC 8737) an ACME issuance waits on for this name, if any. */
  readonly alpn?: (serverName: string) => { readonly cert: string; readonly key: string } | undefined;
}

export type TlsDoor = Door;

type MutableExchange = { -readonly [K in keyof Exchange]: Exchange[K] };

function headersOf(hdrs: OutgoingHeaders, extra: OutgoingHeaders | undefined): Record<string, string | string[]> {
  const out = headerRecord<string | string[]>();
  for (const [name, value] of Object.entries(hdrs)) {
    if (doorOwned(name, value)) continue;
    out[name] = typeof value === 'string' ? value : [...value];
  }
  if (extra) Object.assign(out, extra);
  return out;
}

function exchangeOf(req: IncomingMessage, res: ServerResponse, opts: TlsDoorOptions, draining: () => boolean, finish: () => void): MutableExchange {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const abortHandlers: Array<() => void> = [];
  let headSent = false;
  let bodilessHead = false;
  /** The relayed length the head stated (null: none), and the body bytes written under it. */
  let stated: number | null = null;
  let written = 0;
  const closing = () => (draining() ? CLOSING : undefined);
  res.on('close', () => {
    if (!res.writableFinished && !ex.aborted) {
      ex.aborted = true;
      for (const fn of abortHandlers.splice(0)) fn();
    }
    finish();
  });
  const ex: MutableExchange = {
    plane: opts.plane,
    method: (req.method ?? 'GET').toUpperCase(),
    path: q === -1 ? url : url.slice(0, q),
    query: q === -1 ? '' : url.slice(q + 1),
    headers: readNodeHeaders(req),
    remoteAddress: peerAddress(req.socket),
    secure: true,
    receivedAt: opts.clock.now(),
    aborted: false,
    responded: false,
    status: 0,
    onAbort(fn) {
      if (ex.aborted) fn();
      else abortHandlers.push(fn);
    },
    async readBody(limit) {
      if (Number(req.headers['content-length'] ?? 0) > limit) throw new GatewayError('body.too-large', `The request body may be at most ${limit} bytes.`);
      const parts: Buffer[] = [];
      let size = 0;
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.byteLength;
        if (size > limit) throw new GatewayError('body.too-large', `The request body may be at most ${limit} bytes.`);
        parts.push(chunk);
      }
      return Buffer.concat(parts);
    },
    bodyStream: () => req as AsyncIterable<Uint8Array>,
    send(status, hdrs, body) {
      if (ex.aborted || ex.responded) return;
      ex.responded = true;
      ex.status = status;
      const headers = headersOf(hdrs, closing());
      if (ex.method === 'HEAD') {
        headers['content-length'] = String(headLength(hdrs, body));
        res.writeHead(status, headers).end();
      } else if (bodiless(status)) {
        res.writeHead(status, headers).end();
      } else {
        const payload = body ?? '';
        headers['content-length'] = String(typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength);
        res.writeHead(status, headers).end(payload);
      }
    },
    writeHead(status, hdrs) {
      if (ex.aborted || ex.responded || headSent) return;
      headSent = true;
      ex.status = status;
      bodilessHead = bodiless(status) || ex.method === 'HEAD';
      const headers = headersOf(hdrs, closing());
      // A relayed length stays: it is the length of what follows.
      const length = hdrs['content-length'];
      if (typeof length === 'string') {
        headers['content-length'] = length;
        const n = Number(length);
        if (!bodilessHead && Number.isSafeInteger(n)) stated = n;
      }
      res.writeHead(status, headers);
    },
    write(chunk) {
      if (ex.aborted || ex.responded || bodilessHead) return true;
      written += chunk.byteLength;
      if (stated !== null && written > stated) {
        // Past the stated length the bytes would be read as the client's next answer: the connection is cut instead.
        ex.abort();
        return true;
      }
      // Node's response keeps the chunk until the socket took it, and the caller may reuse it (Exchange.write).
      return res.write(Buffer.from(chunk));
    },
    drained() {
      if (ex.aborted || ex.responded || !res.writableNeedDrain) return Promise.resolve();
      return new Promise<void>((resolve) => {
        res.once('drain', resolve);
        ex.onAbort(resolve);
      });
    },
    end(chunk) {
      if (ex.aborted || ex.responded) return;
      if (stated !== null && written + (chunk && !bodilessHead ? chunk.byteLength : 0) !== stated) {
        // Short of its stated length (or past it) an answer cannot be finished honestly: the cut connection says so.
        ex.abort();
        return;
      }
      ex.responded = true;
      if (chunk && !bodilessHead) res.end(chunk);
      else res.end();
    },
    abort() {
      if (ex.aborted || ex.responded) return;
      ex.responded = true;
      res.destroy();
    },
  };
  return ex;
}

/** Binds first: the promise rejects with DoorBindError before anything else changed. */
export async function openTlsDoor(opts: TlsDoorOptions): Promise<TlsDoor> {
  const flight = new InFlight();
  const begin = () => flight.begin();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const ex = exchangeOf(req, res, opts, () => flight.draining, begin());
    // node:http refuses most requests framed two ways itself, but calls this handler for a coding
    // it cannot read (`xchunked`) before it refuses the body: such a request goes no further.
    if (isAmbiguousFraming(ex.headers)) {
      ex.abort();
      return;
    }
    let pending: void | Promise<void>;
    try {
      pending = opts.handler(ex);
    } catch (err) {
      opts.onError(err, ex);
      return;
    }
    if (pending) pending.catch((err: unknown) => opts.onError(err, ex));
  };
  const http: Server = createHttpServer({ keepAliveTimeout: 10_000 }, handle);
  const sockets = serveTlsSockets(http, opts, { begin, draining: () => flight.draining });

  /**
   * Refuses a handshake with a fatal alert, sent in the clear as TLS allows before the handshake
   * (RFC 8446 section 6), so that the client says why instead of "unexpected EOF".
   */
  const refuse = (raw: Socket, err: Error, serverName: string | undefined, alert: number = ALERT.handshakeFailure) => {
    opts.onHandshakeError?.(err, serverName);
    raw.end(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, alert]));
    raw.setTimeout(1000, () => raw.destroy());
  };
  /** Starts TLS on a socket whose ClientHello was read, with the one certificate chosen for it. */
  const secure = (raw: Socket, received: Buffer, serverName: string | undefined, protocols: readonly string[]) => {
    let context: SecureContext | Error;
    let acme = false;
    // An authority validating a name offers acme-tls/1 alone; it gets the answer, never a certificate.
    if (opts.alpn && serverName && protocols.length === 1 && protocols[0] === ACME_TLS_ALPN) {
      const answer = opts.alpn(serverName);
      if (!answer) return refuse(raw, new Error(`no ACME validation waits on ${serverName}`), serverName, ALERT.noApplicationProtocol);
      context = doorContext(answer.cert, answer.key);
      acme = true;
    } else {
      context = opts.resolve(serverName);
    }
    if (context instanceof Error) return refuse(raw, context, serverName, ALERT.unrecognizedName);
    raw.pause();
    raw.unshift(received);
    const tls = new TLSSocket(raw, { isServer: true, secureContext: context, ALPNProtocols: acme ? [ACME_TLS_ALPN] : ['http/1.1'] });
    const timer = setTimeout(() => tls.destroy(), HANDSHAKE_TIMEOUT_MS);
    let established = false;
    tls.once('secure', () => {
      established = true;
      clearTimeout(timer);
      // The authority closes after the handshake (RFC 8737 section 3); nothing is served on it.
      if (acme) tls.end();
    });
    tls.on('error', (err) => {
      clearTimeout(timer);
      if (!established) opts.onHandshakeError?.(err, serverName);
      tls.destroy();
    });
    tls.on('close', () => clearTimeout(timer));
    if (!acme) http.emit('connection', tls);
  };

  const tcp: TcpServer = createTcpServer({ pauseOnConnect: true, noDelay: true }, (raw) => {
    let received: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => raw.destroy(), HANDSHAKE_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const hello = readClientHello(received);
      if (hello.kind === 'more' && received.length <= MAX_HELLO_BYTES) return;
      raw.off('data', onData);
      clearTimeout(timer);
      if (hello.kind !== 'hello') return refuse(raw, new Error(hello.kind === 'invalid' ? hello.reason : 'ClientHello too large'), undefined, ALERT.decodeError);
      // A client that calls an address sends no name (RFC 6066 forbids literal addresses): the
      // address it reached stands for the name, so a certificate carrying that IP entry serves it (rule 1).
      secure(raw, received, hello.serverName ?? addressCalled(raw), hello.protocols);
    };
    raw.on('data', onData);
    raw.on('error', () => raw.destroy());
    raw.on('close', () => clearTimeout(timer));
    raw.resume();
  });

  await new Promise<void>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) => {
      tcp.close();
      reject(new DoorBindError(`the ${opts.plane} plane cannot listen for HTTPS on ${formatAddress(opts.host, opts.port)} (${err.code === 'EADDRINUSE' ? 'address in use' : err.code === 'EADDRNOTAVAIL' ? 'not an address of this machine' : err.code === 'EACCES' ? 'permission denied' : err.message})`));
    };
    tcp.once('error', fail);
    tcp.listen({ host: opts.host, port: opts.port, exclusive: true }, () => {
      tcp.off('error', fail);
      resolve();
    });
  });
  tcp.on('error', () => undefined);
  const port = (tcp.address() as { port: number }).port;
  let accepting = true;

  const door: TlsDoor = {
    plane: opts.plane,
    protocol: 'https',
    address: formatAddress(opts.host, port),
    port,
    get inFlight() { return flight.count; },
    stopAccepting() {
      if (!accepting) return;
      accepting = false;
      flight.draining = true;
      tcp.close();
      http.closeIdleConnections();
    },
    drain: (timeoutMs) => flight.drain(timeoutMs),
    close() {
      door.stopAccepting();
      sockets.closeAll();
      http.closeAllConnections();
    },
  };
  return door;
}
