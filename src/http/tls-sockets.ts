/**
 * WebSocket routes on the HTTPS doors (wss), through `ws`: the same routes, sessions, close codes,
 * buffering limit and pings as on the plain doors (uws-door.ts), so a feed works the same over
 * either door.
 */
import { performance } from 'node:perf_hooks';
import type { Server } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { GatewayError } from './errors.ts';
import type { Exchange } from './exchange.ts';
import { statusLine } from './answer-rules.ts';
import { sendProblem } from './respond.ts';
import {
  Backlog, CLOSE, closeReason, guarded, handshakeRefusal, headExchange, SOCKET_BACKPRESSURE, SOCKET_IDLE_S, SOCKET_MAX_PAYLOAD,
  type Socket, type SocketRequest, type SocketRoute,
} from './socket.ts';
import type { DoorOptions } from './uws-door.ts';
import { peerAddress, readNodeHeaders } from './node-request.ts';

class WsSocket implements Socket {
  closed = false;
  readonly #backlog: Backlog;

  constructor(private readonly ws: WebSocket, limit: number) {
    this.#backlog = new Backlog(limit);
  }

  get bufferedAmount(): number {
    return this.closed ? 0 : this.ws.bufferedAmount;
  }

  send(message: unknown): boolean {
    if (this.closed) return false;
    if (this.#backlog.tooSlow(this.ws.bufferedAmount)) {
      this.close(CLOSE.tryAgain, `too slow: more than ${this.#backlog.limit} bytes waited to be sent; reconnect`);
      return false;
    }
    const text = JSON.stringify(message);
    this.ws.send(text);
    this.#backlog.sent(Buffer.byteLength(text));
    return true;
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close(code, closeReason(reason));
  }
}

/** The refusal of an upgrade: a plain HTTP answer on the raw socket, then the connection closes. */
function refuseOn(socket: Duplex, request: SocketRequest, err: unknown, opts: DoorOptions): void {
  const ex = {
    ...headExchange(request),
    responded: false,
    send(status: number, headers: Readonly<Record<string, string | readonly string[]>>, body?: string | Uint8Array) {
      const payload = Buffer.from(body ?? '');
      const lines = [`HTTP/1.1 ${statusLine(status)}`];
      for (const [k, v] of Object.entries(headers)) for (const one of typeof v === 'string' ? [v] : v) if (k !== 'content-length') lines.push(`${k}: ${one}`);
      lines.push(`content-length: ${payload.byteLength}`, 'connection: close', '', '');
      socket.end(Buffer.concat([Buffer.from(lines.join('\r\n')), payload]));
    },
  } as Exchange;
  if (err instanceof GatewayError) sendProblem(ex, err);
  else opts.onError(err, ex);
}

export function serveTlsSockets(server: Server, opts: DoorOptions, door: { begin: () => () => void; draining: () => boolean }): { closeAll(): void } {
  const routes = new Map((opts.sockets ?? []).map((r) => [r.path, r]));
  const open = new Set<WsSocket>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: SOCKET_MAX_PAYLOAD });

  server.on('upgrade', (req: IncomingMessage, raw: Duplex, head: Buffer) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const mono = performance.now();
    const request: SocketRequest = {
      plane: opts.plane, method: (req.method ?? 'GET').toUpperCase(), path: q === -1 ? url : url.slice(0, q),
      query: q === -1 ? '' : url.slice(q + 1), headers: readNodeHeaders(req), remoteAddress: peerAddress(req.socket),
      secure: true, receivedAt: opts.clock.at(mono), receivedMono: mono,
    };
    const route = routes.get(request.path);
    if (!route) {
      refuseOn(raw, request, new GatewayError('not-found', `No WebSocket is served at ${request.path}.`), opts);
      return;
    }
    const finish = door.begin();
    let gone = false;
    raw.on('close', () => { gone = true; finish(); });
    const malformed = handshakeRefusal(request);
    const decided = malformed !== null
      ? Promise.reject(malformed)
      : door.draining() ? Promise.reject(new GatewayError('draining')) : Promise.resolve().then(() => route.accept(request));
    decided.then((session) => {
      if (gone) return;
      if (door.draining()) throw new GatewayError('draining');
      wss.handleUpgrade(req, raw, head, (ws) => {
        finish();
        const limit = route.maxBackpressure ?? SOCKET_BACKPRESSURE;
        const socket = new WsSocket(ws, limit);
        open.add(socket);
        liveness(ws, route);
        ws.on('message', (data, isBinary) => {
          if (isBinary || !session.onMessage) return;
          const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8');
          guarded(route, socket, () => session.onMessage!(text));
        });
        ws.on('close', (code, reason) => {
          socket.closed = true;
          open.delete(socket);
          guarded(route, undefined, () => session.onClose(code, reason.toString('utf8')));
        });
        ws.on('error', () => undefined);
        guarded(route, socket, () => session.onOpen(socket));
      });
    }).catch((err: unknown) => {
      if (gone) return;
      refuseOn(raw, request, err, opts);
      finish();
    });
  });

  return {
    closeAll() {
      for (const s of [...open]) s.close(CLOSE.goingAway, 'the gateway is stopping; reconnect');
    },
  };
}

/** Pings after the idle time and ends a client that did not answer by the next one, as uWS does. */
function liveness(ws: WebSocket, route: SocketRoute): void {
  let alive = true;
  ws.on('pong', () => { alive = true; });
  ws.on('message', () => { alive = true; });
  const timer = setInterval(() => {
    if (!alive) {
      ws.terminate();
      return;
    }
    alive = false;
    ws.ping();
  }, (route.idleTimeoutS ?? SOCKET_IDLE_S) * 1000);
  timer.unref();
  ws.on('close', () => clearInterval(timer));
}
