/**
 * The HTTPS doors, on node:tls (node:https). They build the same Exchange as the uWS plain doors,
 * so the plane handlers serve both unchanged, and apply the same answer rules (answer-rules.ts).
 * The certificate is chosen at each handshake by the door's resolver (SNI); without a server
 * name the door presents its fallback, which `setFallback` swaps for new handshakes while open
 * connections keep theirs. WebSocket routes are served through `ws` (tls-sockets.ts).
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Clock } from '../clock/clock.ts';
import type { PlaneName } from '../settings/settings.ts';
import { formatAddress } from '../settings/address.ts';
import { GatewayError } from './errors.ts';
import type { Exchange, OutgoingHeaders } from './exchange.ts';
import { CLOSING, bodiless, doorOwned, headLength } from './answer-rules.ts';
import { DoorBindError, type Door, type DoorOptions } from './uws-door.ts';
import { serveTlsSockets } from './tls-sockets.ts';
import { peerAddress, readNodeHeaders } from './node-request.ts';
import { ACME_TLS_ALPN, type AlpnAnswer } from '../core/tls/acme-challenges.ts';

export interface TlsDoorOptions extends DoorOptions {
  /** The context for a handshake that asked `serverName`; an Error refuses it (the log says why). */
  readonly resolve: (serverName: string) => SecureContext | Error;
  /** Told when a handshake is refused, for the operational log. */
  readonly onHandshakeError?: (err: Error, serverName: string | undefined) => void;
  /** The TLS-ALPN-01 answer (RFC 8737) an ACME issuance waits on for this name, if any. */
  readonly alpn?: (serverName: string) => AlpnAnswer | undefined;
}

export interface TlsDoor extends Door {
  /** What a handshake without a server name gets from now on (rule 9's fallback). */
  setFallback(material: { cert: string; key: string } | undefined): void;
}

type MutableExchange = { -readonly [K in keyof Exchange]: Exchange[K] };

function headersOf(hdrs: OutgoingHeaders, extra: OutgoingHeaders | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
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
      bodilessHead = bodiless(status) || ex.method === 'HEAD';
      const headers = headersOf(hdrs, closing());
      // A relayed length stays: it is the length of what follows.
      const length = hdrs['content-length'];
      if (typeof length === 'string') headers['content-length'] = length;
      res.writeHead(status, headers);
    },
    write(chunk) {
      if (ex.aborted || ex.responded || bodilessHead) return true;
      return res.write(chunk);
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
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | undefined;
  const begin = () => {
    inFlight++;
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      inFlight--;
      if (inFlight === 0) idle?.();
    };
  };
  const alpn = opts.alpn;
  // A handshake whose ALPN chose acme-tls/1 gets the answer, never an ordinary certificate.
  const acmeHandshakes = new WeakMap<object, AlpnAnswer>();
  const server: Server = createServer({
    // Node runs ALPNCallback before SNICallback, both with the handshake's socket as `this`: the
    // first notes an ACME validation, the second presents its answer (RFC 8737 section 3). An
    // authority offers acme-tls/1 alone; any other client keeps http/1.1, and one that does not
    // offer it could not speak to this door: it is told so (RFC 7301 no_application_protocol).
    ...(alpn ? {
      ALPNCallback(this: unknown, { servername, protocols }: { servername: string; protocols: string[] }): string | undefined {
        if (protocols.length === 1 && protocols[0] === ACME_TLS_ALPN) {
          const answer = servername ? alpn(servername) : undefined;
          if (answer === undefined) return undefined; // no validation waits on this name: the handshake ends
          acmeHandshakes.set(this as object, answer);
          return ACME_TLS_ALPN;
        }
        return protocols.includes('http/1.1') ? 'http/1.1' : undefined;
      },
    } : {}),
    SNICallback(this: unknown, serverName: string, cb: (err: Error | null, ctx?: SecureContext) => void) {
      const answer = acmeHandshakes.get(this as object);
      if (answer !== undefined) {
        cb(null, createSecureContext({ cert: answer.cert, key: answer.key }));
        return;
      }
      const chosen = opts.resolve(serverName);
      if (chosen instanceof Error) {
        opts.onHandshakeError?.(chosen, serverName);
        cb(chosen);
      } else cb(null, chosen);
    },
    keepAliveTimeout: 10_000,
  }, (req, res) => {
    const ex = exchangeOf(req, res, opts, () => draining, begin());
    let pending: void | Promise<void>;
    try {
      pending = opts.handler(ex);
    } catch (err) {
      opts.onError(err, ex);
      return;
    }
    if (pending) pending.catch((err: unknown) => opts.onError(err, ex));
  });
  // The authority closes after the handshake (RFC 8737 section 3); nothing is served on it.
  server.on('secureConnection', (socket) => {
    if (socket.alpnProtocol === ACME_TLS_ALPN) socket.end();
  });
  server.on('tlsClientError', (err, socket) => {
    const name = (socket as unknown as { servername?: string | false }).servername;
    opts.onHandshakeError?.(err, typeof name === 'string' ? name : undefined);
  });
  const sockets = serveTlsSockets(server, opts, { begin, draining: () => draining });

  await new Promise<void>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) => {
      server.close();
      reject(new DoorBindError(`the ${opts.plane} plane cannot listen for HTTPS on ${formatAddress(opts.host, opts.port)} (${err.code === 'EADDRINUSE' ? 'address in use' : err.code === 'EADDRNOTAVAIL' ? 'not an address of this machine' : err.code === 'EACCES' ? 'permission denied' : err.message})`));
    };
    server.once('error', fail);
    server.listen({ host: opts.host, port: opts.port, exclusive: true }, () => {
      server.off('error', fail);
      resolve();
    });
  });
  server.on('error', () => undefined);
  const port = (server.address() as { port: number }).port;
  let accepting = true;

  const door: TlsDoor = {
    plane: opts.plane,
    protocol: 'https',
    address: formatAddress(opts.host, port),
    port,
    get inFlight() { return inFlight; },
    setFallback(material) {
      // A server without a default context refuses handshakes that name no server.
      server.setSecureContext(material ? { cert: material.cert, key: material.key } : {});
    },
    stopAccepting() {
      if (!accepting) return;
      accepting = false;
      draining = true;
      server.close();
      server.closeIdleConnections();
    },
    drain(timeoutMs) {
      draining = true;
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        idle = () => { clearTimeout(timer); resolve(); };
      });
    },
    close() {
      door.stopAccepting();
      sockets.closeAll();
      server.closeAllConnections();
    },
  };
  return door;
}
