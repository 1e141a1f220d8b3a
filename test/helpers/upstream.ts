/**
 * A real upstream service for data-plane tests: node:http on 127.0.0.1, port 0. By default it
 * echoes what it received as JSON; a test may replace the handler. Every request is recorded
 * (method, url, headers, raw headers, body length and SHA-256) once its body has been read.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { connect, createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';

export interface Received {
  readonly method: string;
  /** Path and query as the upstream saw them. */
  readonly url: string;
  /** Lower-case names (node:http's view: repeated values joined). */
  readonly headers: IncomingMessage['headers'];
  /** Name/value pairs exactly as sent on the wire. */
  readonly rawHeaders: readonly string[];
  readonly bodyLength: number;
  readonly bodySha256: string;
  /** The body as text when it is at most 64 KiB, else ''. */
  readonly body: string;
}

/** A handler may answer on its own; returning without answering leaves the request hanging. */
export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, received: Received) => void | Promise<void>;

export interface Upstream {
  readonly port: number;
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  readonly requests: Received[];
  /** The last request received (throws when none). */
  last(): Received;
  /** Replaces the handler for the requests that follow; undefined restores the echo. */
  handle(handler: UpstreamHandler | undefined): void;
  close(): Promise<void>;
}

const KEEP_TEXT = 64 * 1024;

/** Answers 200 with JSON describing the request. */
export const echo: UpstreamHandler = (_req, res, received) => {
  const body = JSON.stringify(received);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

export async function startUpstream(initial?: UpstreamHandler): Promise<Upstream> {
  let handler: UpstreamHandler = initial ?? echo;
  const requests: Received[] = [];
  const server: Server = createServer((req, res) => {
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let length = 0;
    req.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      length += chunk.length;
      if (length <= KEEP_TEXT) kept.push(chunk);
    });
    req.on('end', () => {
      const received: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        bodyLength: length,
        bodySha256: hash.digest('hex'),
        body: length <= KEEP_TEXT ? Buffer.concat(kept).toString('utf8') : '',
      };
      requests.push(received);
      Promise.resolve()
        .then(() => handler(req, res, received))
        .catch((err: unknown) => {
          if (!res.headersSent) res.writeHead(599);
          res.end(String(err));
        });
    });
    req.on('error', () => undefined);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    last() {
      const r = requests.at(-1);
      if (r === undefined) throw new Error('the upstream received no request');
      return r;
    },
    handle(h) {
      handler = h ?? echo;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Deterministic bytes: `total` bytes in chunks of `chunk`, each chunk derived from its index. */
export function* pattern(total: number, chunk = 64 * 1024): Generator<Buffer> {
  let sent = 0;
  let i = 0;
  while (sent < total) {
    const size = Math.min(chunk, total - sent);
    const block = Buffer.alloc(size);
    let x = (i * 2654435761 + 12345) >>> 0;
    for (let k = 0; k < size; k += 4) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      if (k + 4 <= size) block.writeUInt32LE(x, k);
      else for (let j = k; j < size; j++) block[j] = (x >>> ((j - k) * 8)) & 0xff;
    }
    yield block;
    sent += size;
    i++;
  }
}

/** SHA-256 (hex) of what `pattern(total, chunk)` yields. */
export function patternSha256(total: number, chunk = 64 * 1024): string {
  const hash = createHash('sha256');
  for (const block of pattern(total, chunk)) hash.update(block);
  return hash.digest('hex');
}

/** One raw HTTP/1.1 exchange over node:net, for what undici refuses to send. Resolves with the final answer's status, raw head, header lines and body; the answer ends at its declared length, at the end of its head (HEAD, 204, 304), or when the connection closes (send `Connection: close`). */
export function rawRequest(port: number, text: string, timeoutMs = 5000): Promise<{ status: number; head: string; body: string; headerLines: string[] }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const headRequest = text.startsWith('HEAD ');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => { sock.destroy(); finish(); }, timeoutMs);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const all = finalAnswer(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) {
        reject(new Error(`no complete answer: ${JSON.stringify(all.slice(0, 200))}`));
        return;
      }
      const head = all.slice(0, end);
      const lines = head.split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      resolve({ status, head, body: all.slice(end + 4), headerLines: lines.slice(1) });
    };
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      // A declared length lets us stop without waiting for the close.
      const all = finalAnswer(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end >= 0) {
        // An answer to HEAD, a 204 and a 304 end with their head, whatever length they announce.
        if (headRequest || /^HTTP\/1\.[01] (204|304) /.test(all)) { sock.destroy(); finish(); return; }
        const len = /\r\ncontent-length:\s*(\d+)/i.exec(all.slice(0, end));
        if (len && all.length - end - 4 >= Number(len[1])) { sock.destroy(); finish(); }
      }
    });
    sock.on('close', finish);
    sock.on('error', () => finish());
    sock.write(text);
  });
}

/** The bytes received so far, past any interim answer (100 Continue). */
function finalAnswer(chunks: readonly Buffer[]): string {
  let all = Buffer.concat(chunks).toString('latin1');
  while (/^HTTP\/1\.[01] 1\d\d /.test(all) && all.includes('\r\n\r\n')) all = all.slice(all.indexOf('\r\n\r\n') + 4);
  return all;
}

/**
 * A raw TCP service, for answers node:http would not write: `onRequest` gets each request's head
 * (once its stated body is in) and the socket, to write any bytes.
 */
export async function rawService(onRequest: (head: string, socket: Socket, n: number) => void): Promise<{ server: NetServer; origin: string; connections: () => number; heads: string[] }> {
  let connections = 0;
  const heads: string[] = [];
  const server = createNetServer((socket) => {
    connections++;
    let held = '';
    socket.on('data', (d) => {
      held += d.toString('latin1');
      let end: number;
      while ((end = held.indexOf('\r\n\r\n')) >= 0) {
        const head = held.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (held.length < end + 4 + length) return;
        held = held.slice(end + 4 + length);
        heads.push(head);
        onRequest(head, socket, heads.length);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, heads };
}
