#!/usr/bin/env node
// upstream.mjs - the service the scheduler bench's schedules call. uWebSockets.js, answers 200 at once and
// records every call: arrival time, the schedule's `x-due` header and the gateway's job headers.
//
// Usage: node bench/scheduler/upstream.mjs [port, 0 = any]
//   prints "scheduler-upstream listening on 127.0.0.1:<port>" once it listens.
// Endpoints (the bench's own, never called by the gateway):
//   GET /__stats   {"calls": N, "jobs": distinct Gateway-Job values}        (cheap: polled while waiting)
//   GET /__dump    {"fields": [...], "calls": [[...], ...]}                 (every call, in arrival order)
// Any other request is a scheduled call: recorded, then answered 200 "ok".
import * as uWS from 'uWebSockets.js';
import { serveUntilStopped } from '../lib/uws-serve.mjs';

const [portArg = '0'] = process.argv.slice(2);
// One row per call, in arrival order. `at` is the wall clock with sub-millisecond resolution
// (timeOrigin + the monotonic clock), `wall` the plain Date.now() of the same moment: the bench
// compares both against `x-due`, which the bench computed from the same machine's wall clock.
const FIELDS = ['at', 'wall', 'due', 'job', 'run', 'attempt', 'method', 'url'];
const calls = [];
const jobs = new Set();

const json = (res, status, body) => res.cork(() => {
  res.writeStatus(status).writeHeader('content-type', 'application/json').end(JSON.stringify(body));
});

serveUntilStopped(uWS.App().get('/__stats', (res) => {
  json(res, '200 OK', { calls: calls.length, jobs: jobs.size });
}).get('/__dump', (res) => {
  json(res, '200 OK', { fields: FIELDS, calls });
}).any('/*', (res, req) => {
  const at = performance.timeOrigin + performance.now();
  const wall = Date.now();
  // req is only valid synchronously inside this handler: copy what is recorded now.
  const job = req.getHeader('gateway-job');
  calls.push([at, wall, Number(req.getHeader('x-due')) || null, job, req.getHeader('gateway-job-run'),
    Number(req.getHeader('gateway-job-attempt')) || null, req.getCaseSensitiveMethod(), req.getUrl()]);
  jobs.add(job);
  // The answer waits for the end of the request body (if any), so a keep-alive connection stays in step.
  let aborted = false;
  res.onAborted(() => { aborted = true; });
  res.onData((_chunk, isLast) => {
    if (isLast && !aborted) res.cork(() => res.writeStatus('200 OK').end('ok'));
  });
}), Number(portArg), 'scheduler-upstream');
