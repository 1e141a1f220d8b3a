#!/usr/bin/env node
// slow-upstream.mjs - the service of the p95 check's second part: it answers every request after a delay drawn
// from a fixed distribution, so that the latencies wrk and the MetricsRing both see are those of a service that
// takes time, and what lies outside the gateway's span (wrk's side, the loopback, the wake-ups of idle cores:
// about 1-2 ms on a 2-core VM) is small beside them.
//
//   node bench/observe/slow-upstream.mjs <port>
//
// The delay is BASE_MS plus an exponential tail of mean TAIL_MS (capped at CAP_MS), from a seeded generator:
// p50 about 304 ms, p95 about 649 ms. Prints `listening <port>` once it accepts connections.
import http from 'node:http';

const BASE_MS = 200;
const TAIL_MS = 150;
const CAP_MS = 3_000;

// mulberry32: a small seeded generator, so two runs draw the same delays.
let seed = 0x6d65_6b74;
function uniform() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('usage: slow-upstream.mjs <port>\n');
  process.exit(2);
}
const body = Buffer.from('{"slow":true}\n');
const server = http.createServer((req, res) => {
  const delay = Math.min(CAP_MS, BASE_MS - TAIL_MS * Math.log(1 - uniform()));
  req.resume();
  setTimeout(() => res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body), delay);
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`listening ${port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
