// floor-proxy.mjs - the "floor" of the proxy benchmark: the least work any relay on Meerkat's machinery does.
// The same uWebSockets.js door as the gateway, keep-alive `net` sockets to the upstream read through `onread` (as
// the gateway's own client), and nothing else: no routing, no header checks, no token, no timeouts, no observers.
// It answers the bench's loads (answers with a Content-Length) and says 502 to anything else. It is a measuring
// stick, not a proxy to run: what it costs a request is what no gateway on uWS and Node's sockets can go below on
// this machine, so the distance between it and bare-uws bounds what "doing less than a naive proxy" can win.
//
// Usage: node bench/proxy/floor-proxy.mjs <port|0> <upstream-origin> [pool-connections=64]
//   prints "floor-proxy listening on 127.0.0.1:<port> -> <upstream>" once it listens.
import * as uWS from 'uWebSockets.js';
import net from 'node:net';
import { STATUS_CODES } from 'node:http';
import { serveUntilStopped } from '../lib/uws-serve.mjs';

const [portArg = '0', upstream = 'http://127.0.0.1:8080', poolArg = '64'] = process.argv.slice(2);
const up = new URL(upstream);
const HOST_LINE = `host: ${up.host}\r\n`;
const MAX = Number(poolArg);
const SKIP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'host', 'expect']);
const STATUS = {};
for (const code in STATUS_CODES) STATUS[code] = `${code} ${STATUS_CODES[code]}`;
const CRLF2 = Buffer.from('\r\n\r\n');

const idle = [];
const waiting = [];
let open = 0;

/** One upstream connection: reads land in its one window (`onread`), parsed only as far as the relay needs. */
function connection() {
  const window = Buffer.allocUnsafeSlow(64 * 1024);
  const c = { socket: null, ex: null, head: null, pending: null, left: 0, total: 0, started: false };
  c.socket = net.connect({ host: up.hostname, port: Number(up.port), noDelay: true, onread: { buffer: window, callback: (n) => onRead(c, window, n) } });
  c.socket.on('error', () => fail(c));
  c.socket.on('close', () => { open--; fail(c); const i = idle.indexOf(c); if (i >= 0) idle.splice(i, 1); });
  open++;
  return c;
}

function onRead(c, window, n) {
  const ex = c.ex;
  if (!ex) return;
  let chunk = window.subarray(0, n);
  if (c.head === null) {
    // The answer's head: kept until it is whole (copied: the window is overwritten by the next read).
    c.pending = c.pending ? Buffer.concat([c.pending, chunk]) : Buffer.from(chunk);
    const end = c.pending.indexOf(CRLF2);
    if (end < 0) return;
    const lines = c.pending.toString('latin1', 0, end).split('\r\n');
    const status = Number(lines[0].slice(9, 12));
    const headers = [];
    let length = -1;
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i].indexOf(':');
      const name = lines[i].slice(0, colon).toLowerCase();
      const value = lines[i].slice(colon + 1).trim();
      if (name === 'content-length') length = Number(value);
      else if (name !== 'date' && !SKIP.has(name)) headers.push(name, value);
    }
    if (length < 0) return fail(c);
    c.head = { status, headers };
    c.total = length;
    c.left = length;
    chunk = c.pending.subarray(end + 4);
    c.pending = null;
  }
  c.left -= chunk.length;
  const done = c.left <= 0;
  if (!ex.aborted) {
    ex.res.cork(() => {
      if (!c.started) {
        c.started = true;
        ex.res.writeStatus(STATUS[c.head.status] ?? String(c.head.status));
        const h = c.head.headers;
        for (let i = 0; i < h.length; i += 2) ex.res.writeHeader(h[i], h[i + 1]);
      }
      const base = ex.res.getWriteOffset();
      const [ok] = ex.res.tryEnd(chunk, c.total);
      if (ok) return;
      // The caller is slower than the upstream: keep what was not taken (the window is reused) and, while
      // the answer has more to come, stop reading until it is (uWS's tryEnd and onWritable idiom).
      const rest = Buffer.from(chunk);
      if (!done) c.socket.pause();
      const socket = c.socket;
      ex.res.onWritable((offset) => {
        const [ok2, fin] = ex.res.tryEnd(rest.subarray(offset - base), c.total);
        if ((ok2 || fin) && !done) socket.resume();
        return ok2;
      });
    });
  }
  if (done) release(c);
}

function release(c) {
  c.ex = null;
  c.head = null;
  c.started = false;
  const next = waiting.shift();
  if (next) send(c, next);
  else idle.push(c);
}

function fail(c) {
  const ex = c.ex;
  c.ex = null;
  if (ex && !ex.aborted) {
    ex.aborted = true;
    ex.res.cork(() => (c.started ? ex.res.close() : ex.res.writeStatus('502 Bad Gateway').end('bad gateway\n')));
  }
  c.socket.destroy();
}

function send(c, ex) {
  c.ex = ex;
  ex.conn = c;
  c.socket.write(ex.head);
  if (ex.body) c.socket.write(ex.body);
}

function dispatch(ex) {
  const c = idle.pop() ?? (open < MAX ? connection() : null);
  if (c) send(c, ex);
  else waiting.push(ex);
}

serveUntilStopped(uWS.App().any('/*', (res, req) => {
  const ex = { res, head: '', body: null, aborted: false, conn: null };
  // A caller that leaves while its answer is paused behind it: the rest is read (and dropped) so that the
  // connection comes back to the pool; uWS calls no onWritable for a response that is gone.
  res.onAborted(() => { ex.aborted = true; if (ex.conn?.ex === ex) ex.conn.socket.resume(); });
  const query = req.getQuery();
  let head = `${req.getCaseSensitiveMethod()} ${query ? `${req.getUrl()}?${query}` : req.getUrl()} HTTP/1.1\r\n${HOST_LINE}`;
  req.forEach((k, v) => { if (!SKIP.has(k)) head += `${k}: ${v}\r\n`; });
  ex.head = `${head}\r\n`;
  const cl = req.getHeader('content-length');
  if (cl === '' || cl === '0') return dispatch(ex);
  const chunks = [];
  res.onData((ab, isLast) => {
    chunks.push(Buffer.from(ab.slice(0)));
    if (isLast) {
      ex.body = Buffer.concat(chunks);
      dispatch(ex);
    }
  });
}), Number(portArg), 'floor-proxy', ` -> ${upstream}`);
