/**
 * The HTTPS doors, on node:tls. They build the same Exchange as the uWS plain doors, so the plane
 * handlers serve both unchanged, and apply the same answer rules (answer-rules.ts). Each
 * connection's ClientHello is read first (client-hello.ts): the resolver chooses the certificate
 * for the server name asked (none: the plane's fallback), and the handshake starts with exactly
 * that one, so a swap changes what new handshakes get while open connections keep theirs.
 * The door then reads the connection's plain requests itself (tls-h1-connection.ts); node:http
 * serves it from its first request that is not plain; WebSocket routes go through `ws`
 * (tls-sockets.ts).
 */
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { TLSSocket, type SecureContext } from 'node:tls';
import { formatAddress } from '../settings/address.ts';
import { DoorBindError, handOver, type Door, type DoorOptions } from './uws-door.ts';
import { InFlight } from './in-flight.ts';
import { serveTlsSockets } from './tls-sockets.ts';
import { doorContext } from './door-context.ts';
import { isAmbiguousFraming } from './request-framing.ts';
import { TlsExchange } from './tls-exchange.ts';
import { KEEP_ALIVE_S } from './tls-h1-exchange.ts';
import { MAX_HELLO_BYTES, readClientHello } from './client-hello.ts';
import { TlsH1Connection, type PlainDoor } from './tls-h1-connection.ts';
import { endAndLinger, refusalFor } from './h1-refusal.ts';

/** RFC 8737: the protocol an ACME authority offers alone to validate a name over TLS. */
const ACME_TLS_ALPN = 'acme-tls/1';
/**
 * The protocols a handshake may agree to, in the door's order of preference. A client that offers
 * "http/1.0" alone (curl --http1.0) would otherwise be refused with a no_application_protocol alert
 * (RFC 7301 3.2) though the door reads HTTP/1.0; one that offers only h2 still is.
 */
const HTTP_ALPN = ['http/1.1', 'http/1.0'];
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

/** Binds first: the promise rejects with DoorBindError before anything else changed. */
export async function openTlsDoor(opts: TlsDoorOptions): Promise<TlsDoor> {
  const flight = new InFlight();
  const begin = () => flight.begin();
  /** The answer node:http is writing on each connection handed to it, for its refusals (below). */
  const answering = new WeakMap<Duplex, ServerResponse>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    answering.set(req.socket, res);
    res.once('close', () => { if (answering.get(req.socket) === res) answering.delete(req.socket); });
    const ex = new TlsExchange(req, res, opts.plane, opts.clock, flight);
    // node:http refuses most requests framed two ways itself, but calls this handler for a coding
    // it cannot read (`xchunked`) before it refuses the body: such a request goes no further.
    if (isAmbiguousFraming(ex.headers)) {
      ex.abort();
      return;
    }
    handOver(opts, ex);
  };
  const http: Server = createHttpServer({ keepAliveTimeout: KEEP_ALIVE_S * 1000 }, handle);
  // What node:http's parser refuses gets node:http's answer, as its own handler would give it unless
  // an answer already began, but the connection ends as the door's own refusals end it: once the
  // client stopped sending, so that the answer is not overtaken by a reset.
  http.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable || answering.get(socket)?.headersSent === true) socket.destroy();
    else endAndLinger(socket, refusalFor(err));
  });
  const sockets = serveTlsSockets(http, opts, { begin, draining: () => flight.draining });
  /** Connections whose plain requests the door reads itself (tls-h1-connection.ts); node:http tracks the others. */
  const plain = new Set<TlsH1Connection>();
  const plainDoor: PlainDoor = {
    plane: opts.plane,
    clock: opts.clock,
    flight,
    serve: (ex) => handOver(opts, ex),
    fallback: (socket) => http.emit('connection', socket),
    forget: (conn) => plain.delete(conn),
  };

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
    const tls = new TLSSocket(raw, { isServer: true, secureContext: context, ALPNProtocols: acme ? [ACME_TLS_ALPN] : HTTP_ALPN });
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
    if (!acme) plain.add(new TlsH1Connection(tls, plainDoor));
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
      for (const conn of [...plain]) conn.closeIdle();
    },
    drain: (timeoutMs) => flight.drain(timeoutMs),
    close() {
      door.stopAccepting();
      sockets.closeAll();
      http.closeAllConnections();
      for (const conn of [...plain]) conn.destroy();
    },
  };
  return door;
}
