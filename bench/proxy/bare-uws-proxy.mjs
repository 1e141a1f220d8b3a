// bare-uws-proxy.mjs - the "bare Node" peer of the proxy benchmark: the least a Node reverse proxy can do.
// uWebSockets.js (uws-pack) server + one undici Pool (keep-alive) to the upstream. No routing, no plugins.
//
// Usage: node bench/proxy/bare-uws-proxy.mjs <port|0> <upstream-origin> [pool-connections=64]
//   prints "bare-uws-proxy listening on 127.0.0.1:<port> -> <upstream>" once it listens (port 0 = any free port).
import * as uWS from 'uWebSockets.js';
import { Pool } from 'undici';
import { STATUS_CODES } from 'node:http';

const [portArg = '0', upstream = 'http://127.0.0.1:8080', poolArg = '64'] = process.argv.slice(2);
const pool = new Pool(upstream, {
  connections: Number(poolArg), // same cap as nginx "keepalive 64"
  pipelining: 1,
  keepAliveTimeout: 60_000,
  keepAliveMaxTimeout: 600_000,
});

const HOP = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer'];
// host: undici sends the upstream's Host, like nginx's default (proxy_set_header Host $proxy_host).
// expect: undici refuses it; uWS answers 100-continue itself.
const REQ_SKIP = new Set([...HOP, 'host', 'expect']);
const RES_SKIP = new Set([...HOP, 'content-length', 'date']); // uWS writes its own Content-Length (or chunked) and Date
const STATUS = {};
for (const code in STATUS_CODES) STATUS[code] = `${code} ${STATUS_CODES[code]}`;

function forward(res, st, opts) {
  pool.request(opts).then(({ statusCode, headers, body }) => {
    if (st.aborted) return void body.dump();
    st.body = body;
    const noBody = opts.method === 'HEAD' || statusCode === 204 || statusCode === 304;
    const total = headers['content-length'] === undefined ? -1 : Number(headers['content-length']);
    let started = false, done = false, pending = false;
    const head = () => {
      started = true;
      res.writeStatus(STATUS[statusCode] ?? String(statusCode));
      for (const k in headers) {
        if (RES_SKIP.has(k)) continue;
        const v = headers[k];
        if (Array.isArray(v)) for (const x of v) res.writeHeader(k, x); else res.writeHeader(k, v);
      }
    };
    body.on('data', (chunk) => {
      if (st.aborted || done) return;
      res.cork(() => {
        if (!started) head();
        if (total < 0) { // unknown length: chunked; write() buffers what the socket does not take
          if (!res.write(chunk)) { body.pause(); res.onWritable(() => (body.resume(), true)); }
          return;
        }
        const base = res.getWriteOffset(); // known length: stream with tryEnd + onWritable (uWS backpressure idiom)
        const [ok, fin] = res.tryEnd(chunk, total);
        done = fin;
        if (ok || fin) return;
        pending = true;
        body.pause();
        res.onWritable((offset) => {
          const [ok, fin] = res.tryEnd(chunk.subarray(offset - base), total);
          done = fin;
          if (fin || ok) { pending = false; if (!fin) body.resume(); }
          return ok;
        });
      });
    });
    body.on('end', () => {
      if (st.aborted || done || pending) return;
      res.cork(() => {
        if (!started) head();
        if (noBody) { if (total >= 0 && opts.method === 'HEAD') res.endWithoutBody(total); else res.endWithoutBody(); }
        else res.end();
      });
    });
    body.on('error', () => fail(res, st, started));
  }, () => fail(res, st, false));
}

function fail(res, st, started) {
  if (st.aborted) return;
  st.aborted = true;
  res.cork(() => (started ? res.close() : res.writeStatus('502 Bad Gateway').end('bad gateway\n')));
}

let listenSocket = null;
uWS.App().any('/*', (res, req) => {
  // req is only valid synchronously inside this handler: copy everything now.
  const st = { aborted: false, body: null };
  res.onAborted(() => { st.aborted = true; st.body?.destroy(); });
  const method = req.getCaseSensitiveMethod();
  const query = req.getQuery();
  const path = query ? `${req.getUrl()}?${query}` : req.getUrl();
  const headers = []; // flat [name, value, ...]: keeps repeated headers
  req.forEach((k, v) => { if (!REQ_SKIP.has(k)) headers.push(k, v); });
  const cl = req.getHeader('content-length');
  if (!req.getHeader('transfer-encoding') && (cl === '' || cl === '0')) return forward(res, st, { method, path, headers, body: null });
  const chunks = [];
  res.onData((ab, isLast) => {
    chunks.push(Buffer.from(ab.slice(0))); // copy: the ArrayBuffer is detached when this callback returns
    if (isLast) forward(res, st, { method, path, headers, body: Buffer.concat(chunks) });
  });
}).listen('127.0.0.1', Number(portArg), (ls) => { // runs synchronously
  if (!ls) { console.error(`bare-uws-proxy: cannot listen on 127.0.0.1:${portArg}`); process.exit(1); }
  listenSocket = ls;
  console.log(`bare-uws-proxy listening on 127.0.0.1:${uWS.us_socket_local_port(ls)} -> ${upstream}`);
});

const stop = () => {
  if (listenSocket) uWS.us_listen_socket_close(listenSocket);
  listenSocket = null;
  setTimeout(() => process.exit(0), 500).unref();
  pool.close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
