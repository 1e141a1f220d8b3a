/**
 * The plain HTTP doors, on uWebSockets.js. Only this module and its exchange (uws-exchange.ts)
 * import it: everything else sees an Exchange, or for WebSocket routes a SocketRequest and a
 * Socket (socket.ts).
 */
// First: it sets what uWS reads from the environment when it loads.
import './uws-limits.ts';
import * as uWS from 'uWebSockets.js';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock/clock.ts';
import type { PlaneName } from '../settings/settings.ts';
import { formatAddress } from '../settings/address.ts';
import { InFlight } from './in-flight.ts';
import { statusLine } from './answer-rules.ts';
import { GatewayError } from './errors.ts';
import type { Exchange, ExchangeHandler } from './exchange.ts';
import { readHeaders, UwsExchange, writeHeaders } from './uws-exchange.ts';
import { sendProblem } from './respond.ts';
import {
  Backlog, CLOSE, closeReason, guarded, handshakeRefusal, headExchange, SOCKET_BACKPRESSURE, SOCKET_IDLE_S, SOCKET_MAX_PAYLOAD, UWS_BACKPRESSURE_CEILING,
  type Socket, type SocketRequest, type SocketRoute, type SocketSession,
} from './socket.ts';

// Present at run time, missing from the package's types: without it SO_REUSEPORT lets a second
// process bind the same port silently.
const LISTEN_EXCLUSIVE_PORT = 1;

export interface DoorOptions {
  readonly plane: PlaneName;
  readonly host: string;
  readonly port: number;
  readonly clock: Clock;
  readonly handler: ExchangeHandler;
  /** Called when a handler throws past its own error handling. */
  readonly onError: (err: unknown, ex: Exchange) => void;
  /** WebSocket routes: an upgrade request to one of these paths goes to its route, not to `handler`. */
  readonly sockets?: readonly SocketRoute[];
}

/**
 * Hands an exchange to the door's handler, synchronously: a throw or a rejection past the
 * handler's own error handling goes to `onError` with the exchange. Both kinds of door call it.
 */
export function handOver(opts: Pick<DoorOptions, 'handler' | 'onError'>, ex: Exchange): void {
  let pending: void | Promise<void>;
  try {
    pending = opts.handler(ex);
  } catch (err) {
    opts.onError(err, ex);
    return;
  }
  if (pending) pending.catch((err: unknown) => opts.onError(err, ex));
}

export interface Door {
  readonly plane: PlaneName;
  readonly protocol: 'http' | 'https';
  /** host:port actually bound (the real port when 0 was asked). */
  readonly address: string;
  readonly port: number;
  readonly inFlight: number;
  /** Closes the listening socket: no new connections; requests in flight go on. */
  stopAccepting(): void;
  /** Resolves when no request is in flight, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>;
  /** Closes every connection; open WebSockets first get a 1001 close frame. */
  close(): void;
}

export class DoorBindError extends Error {
  override readonly name = 'DoorBindError';
}

/** The door's own view of an exchange: it alone flips `aborted` and `responded`. */
type MutableExchange = { -readonly [K in keyof Exchange]: Exchange[K] };

/** ws.send's answer when the message was dropped for maxBackpressure. */
const SEND_DROPPED = 2;

/** What uWS keeps with each socket. */
interface SocketData {
  readonly route: SocketRoute;
  readonly session: SocketSession;
  socket?: DoorSocket;
}

/** The door's Socket: JSON text frames, and a slow reader closed rather than buffered without end. */
class DoorSocket implements Socket {
  closed = false;

  readonly #backlog: Backlog;

  constructor(private readonly ws: uWS.WebSocket<SocketData>, limit: number) {
    this.#backlog = new Backlog(limit);
  }

  get bufferedAmount(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount();
  }

  send(message: unknown): boolean {
    if (this.closed) return false;
    if (this.#backlog.tooSlow(this.ws.getBufferedAmount())) return this.#tooSlow();
    const text = JSON.stringify(message);
    let status = 0;
    this.ws.cork(() => { status = this.ws.send(text, false, false); });
    if (status === SEND_DROPPED) return this.#tooSlow();
    this.#backlog.sent(Buffer.byteLength(text));
    return true;
  }

  #tooSlow(): false {
    this.close(CLOSE.tryAgain, `too slow: more than ${this.#backlog.limit} bytes waited to be sent; reconnect`);
    return false;
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    // end() runs the close handler at once, which marks this socket closed.
    this.ws.end(code, closeReason(reason));
  }
}

/**
 * WebSocket routes. The upgrade request is copied at once (uWS frees it on return), counted in
 * flight like a request until answered, then decided by the route; a refusal is an ordinary
 * problem+json answer, after which the connection closes.
 */
function addSocketRoutes(app: uWS.TemplatedApp, opts: DoorOptions, door: {
  readonly begin: () => () => void;
  readonly draining: () => boolean;
  readonly open: Set<DoorSocket>;
}): void {
  for (const route of opts.sockets ?? []) {
    const limit = route.maxBackpressure ?? SOCKET_BACKPRESSURE;
    app.ws<SocketData>(route.path, {
      maxPayloadLength: SOCKET_MAX_PAYLOAD,
      // We close a slow reader ourselves, with a reason it can read (DoorSocket.send, Backlog).
      maxBackpressure: UWS_BACKPRESSURE_CEILING,
      closeOnBackpressureLimit: false,
      idleTimeout: route.idleTimeoutS ?? SOCKET_IDLE_S,
      sendPingsAutomatically: true,

      upgrade: (res, req, context) => {
        const finish = door.begin();
        const headers = readHeaders(req);
        const mono = performance.now();
        const request: SocketRequest = {
          plane: opts.plane,
          method: req.getCaseSensitiveMethod().toUpperCase(),
          path: req.getUrl(),
          query: req.getQuery() ?? '',
          headers,
          remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
          secure: false,
          receivedAt: opts.clock.at(mono),
          receivedMono: mono,
        };
        const key = headers['sec-websocket-key'] ?? '';
        const extensions = headers['sec-websocket-extensions'] ?? '';
        let aborted = false;
        res.onAborted(() => {
          aborted = true;
          finish();
        });

        const refuse = (err: unknown) => {
          if (aborted) return;
          const ex: MutableExchange = {
            ...headExchange(request),
            send(status, hdrs, body) {
              if (ex.responded || aborted) return;
              ex.responded = true;
              ex.status = status;
              res.cork(() => {
                res.writeStatus(statusLine(status));
                writeHeaders(res, hdrs);
                res.end(body ?? '', true);
              });
            },
          };
          if (err instanceof GatewayError) sendProblem(ex, err);
          else opts.onError(err, ex);
          finish();
        };

        const malformed = handshakeRefusal(request);
        const decided = malformed !== null
          ? Promise.reject(malformed)
          : door.draining()
            ? Promise.reject(new GatewayError('draining'))
            : Promise.resolve().then(() => route.accept(request));
        decided.then((session) => {
          if (aborted) return;
          if (door.draining()) {
            refuse(new GatewayError('draining'));
            return;
          }
          // No subprotocol is spoken: none is echoed, so a client that insists on one fails
          // the handshake itself rather than believing it was agreed.
          res.cork(() => res.upgrade<SocketData>({ route, session }, key, '', extensions, context));
          finish();
        }, refuse);
      },

      open: (ws) => {
        const data = ws.getUserData();
        const socket = new DoorSocket(ws, limit);
        data.socket = socket;
        door.open.add(socket);
        guarded(route, socket, () => data.session.onOpen(socket));
      },

      message: (ws, message) => {
        const data = ws.getUserData();
        const onMessage = data.session.onMessage?.bind(data.session);
        if (!onMessage) return;
        // The ArrayBuffer is only valid inside this callback: decode it now.
        const text = Buffer.from(message).toString('utf8');
        guarded(route, data.socket, () => onMessage(text));
      },

      close: (ws, code, message) => {
        const data = ws.getUserData();
        const socket = data.socket;
        if (!socket) return;
        socket.closed = true;
        door.open.delete(socket);
        const reason = Buffer.from(message).toString('utf8');
        guarded(route, undefined, () => data.session.onClose(code, reason));
      },
    });
  }
}

export function openUwsDoor(opts: DoorOptions): Door {
  const flight = new InFlight();
  const app = uWS.App();
  const sockets = new Set<DoorSocket>();

  addSocketRoutes(app, opts, { begin: () => flight.begin(), draining: () => flight.draining, open: sockets });

  app.any('/*', (res, req) => {
    // One clock read per request: the receipt time and the request record's start.
    const mono = performance.now();
    const ex = new UwsExchange(res, req, opts.plane, flight, opts.clock.at(mono), mono);
    if (ex.ambiguousFraming) {
      // Cut without an answer (two framings): what a proxy in front read as the next request may be
      // this parser's body, or the other way round, and nothing past this head is to be read. A
      // chunked body alone is answered 411 by the plane (UwsExchange.lengthRequired).
      ex.abort();
      return;
    }
    // Called at once, not from a microtask: what the handler needs from req was copied above.
    handOver(opts, ex);
  });

  let listenSocket: uWS.us_listen_socket | false = false;
  (app.listen as unknown as (host: string, port: number, options: number, cb: (s: uWS.us_listen_socket | false) => void) => void)(
    opts.host, opts.port, LISTEN_EXCLUSIVE_PORT, (s) => { listenSocket = s; },
  );
  if (!listenSocket) {
    app.close();
    throw new DoorBindError(`the ${opts.plane} plane cannot listen on ${formatAddress(opts.host, opts.port)} (address in use, or not an address of this machine)`);
  }
  const bound = listenSocket as uWS.us_listen_socket;
  const port = uWS.us_socket_local_port(bound as unknown as uWS.us_socket);
  let accepting = true;

  return {
    plane: opts.plane,
    protocol: 'http',
    address: formatAddress(opts.host, port),
    port,
    get inFlight() { return flight.count; },
    stopAccepting() {
      if (!accepting) return;
      accepting = false;
      flight.draining = true;
      uWS.us_listen_socket_close(bound);
    },
    drain: (timeoutMs) => flight.drain(timeoutMs),
    close() {
      this.stopAccepting();
      for (const socket of [...sockets]) socket.close(CLOSE.goingAway, 'the gateway is stopping; reconnect');
      app.close();
    },
  };
}
