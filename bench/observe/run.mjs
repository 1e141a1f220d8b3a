#!/usr/bin/env node
// run.mjs - what the access log and the traffic metrics cost the data plane, and whether the metrics' p95
// agrees with wrk's; run by hand (never part of the test suite). See bench/observe/README.md.
//
// Starts, all on 127.0.0.1 with free ports: the upstream nginx of the proxy bench (pinned on LOAD_CPU) and one
// gateway per target (bench/proxy/start-meerkat.mjs: the proxy bench's protected route, pinned on PROXY_CPU),
// each with its standard output on a FIFO read by agent.mjs (pinned on LOAD_CPU), the stand-in for a log agent:
//   meerkat              access log off, GATEWAY_METRICS=off
//   meerkat+access-log   access log on (startup format, JSON), GATEWAY_METRICS=off
//   meerkat+metrics      access log off, metrics on (the default)
// drives each with `wrk -t1 -cN -dS --latency` (bench/lib/load.mjs: quiet box, warm-up, rotating rounds,
// DISTURBED runs repeated), and after every run waits until the gateway is idle and counts the lines the agent
// received. Then the p95 check: for each P95_CONNS, once meerkat+metrics's last minute is empty, one run of
// P95_DURATION seconds, and the minute's p50 and p95 (GET /api/metrics) set against wrk's own; then, for each
// P95_SLOW_CONNS, one run through a route of its own to slow-upstream.mjs (a service taking 0.2-3 s), and that
// route's p95 in the minute set against wrk's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { checkPinning, commonConfig, helpFromReadme, NCPU, num, targetList } from '../lib/config.mjs';
import { benchHeaders, headerObject, printed } from '../lib/headers.mjs';
import { cpuSeconds, measure, measurePairs, pairsSeconds, runWrk, waitQuiet, wrkDumpLua } from '../lib/load.mjs';
import { begin, die, finish, freePorts, log, pkgVersion, start, TMP, version, waitHttp } from '../lib/procs.mjs';
import { barVerdict, fmt, gatewayBuild, median, medians, perRunTable, sideBySide, table, warnings } from '../lib/report.mjs';
import { settle } from '../lib/settle.mjs';
import { openBench } from '../lib/upstream.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const GATEWAY_CLI = path.join(REPO, 'dist', 'src', 'cli.js');
helpFromReadme(path.join(HERE, 'README.md'));

const MODES = {
  meerkat: { accessLog: false, metrics: false },
  'meerkat+access-log': { accessLog: true, metrics: false },
  'meerkat+metrics': { accessLog: false, metrics: true },
  'meerkat+both': { accessLog: true, metrics: true },
  // The baseline again: side by side against `meerkat`, its cost ratio is the measure's own bias and spread.
  'meerkat-again': { accessLog: false, metrics: false },
};
const DEFAULT_TARGETS = ['meerkat', 'meerkat+access-log', 'meerkat+metrics'];

// ---------------------------------------------------------------------------------------------- config
const env = process.env;
/** A comma list of connection counts; unset = `dflt`, 0 = none. */
function connsList(name, dflt) {
  const raw = (env[name] ?? '').trim();
  if (raw === '0') return [];
  const xs = raw === '' ? dflt : raw.split(',').filter(Boolean).map(Number);
  for (const c of xs) if (!Number.isInteger(c) || c < 1) die(`${name}: "${raw}" is not a list of connection counts (or 0 for no check)`);
  return xs;
}
const common = commonConfig({ rounds: 5 });
const cfg = {
  ...common,
  readyTimeout: num('MEERKAT_READY_TIMEOUT', 150, 1),
  settleTimeout: num('SETTLE_TIMEOUT', 60, 1),
  settlePct: num('SETTLE_PCT', 10, 1),
  accessRatio: num('ACCESS_RATIO', 0.95, 0),
  metricsRatio: num('METRICS_RATIO', 0.99, 0),
  p95Duration: num('P95_DURATION', 20, 3),
  // Inside the minute the ring reports, with the wait for the last interval to close.
  p95SlowDuration: num('P95_SLOW_DURATION', 40, 3),
  pairs: num('PAIRS', 0, 0),
  p95Conns: connsList('P95_CONNS', [common.conns, 1]),
  p95SlowConns: connsList('P95_SLOW_CONNS', [common.conns]),
};
if (cfg.p95SlowDuration > 45) die(`P95_SLOW_DURATION=${cfg.p95SlowDuration}: at most 45 s, so that the run and the close of its last interval fit in the minute the ring reports`);
const targets = targetList(Object.keys(MODES), DEFAULT_TARGETS);
if (!fs.existsSync(GATEWAY_CLI)) die(`${path.relative(REPO, GATEWAY_CLI)} is missing: run npm run build first`);
checkPinning(cfg);
const warmOf = () => cfg.warmupNode;
const runSlot = cfg.duration + cfg.cooldown + 3 + 10;
const p95Slot = 80 + cfg.p95Duration + 25;
const maxSeconds = num('MAX_SECONDS', Math.ceil(60 + cfg.waitIdle + cfg.readyTimeout
  + targets.length * (warmOf() + cfg.cooldown + 3 + 10) + (cfg.rounds * targets.length + cfg.retries) * runSlot + pairsSeconds(cfg, targets, runSlot)
  + (targets.includes('meerkat+metrics') ? cfg.p95Conns.length * p95Slot + cfg.p95SlowConns.length * (cfg.p95SlowDuration + 60) : 0)), 10);

begin(cfg, { tmpPrefix: 'meerkat-observe-bench-', maxSeconds, cwd: REPO });

// ---------------------------------------------------------------------------------------------- the gateways
// The lines the agent of a target received so far (its count file, replaced every 100 ms).
function agentCount(file) {
  try { return JSON.parse(fs.readFileSync(file, 'utf8')); } catch { return { lines: 0, bytes: 0, sample: '' }; }
}
async function control(T, p) {
  const r = await fetch(`${T.control}${p}`, { headers: { cookie: T.session }, signal: AbortSignal.timeout(10_000) });
  const text = await r.text();
  if (r.status !== 200) die(`${T.name}: GET ${p}: HTTP ${r.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}
// Access lines lost inside the gateway: its queue to the shipper, and the shipper's own drops.
async function droppedOf(T) {
  const s = await control(T, '/api/settings/logs');
  return (s.droppedRecords?.access ?? 0) + (s.dropped?.access ?? 0);
}

const mark = {};
async function before(t) {
  const T = TGT[t];
  mark[t] = { lines: agentCount(T.countFile).lines, cpu: cpuSeconds(T.pgid), dropped: await droppedOf(T) };
}
async function after(t, r) {
  const T = TGT[t];
  const s = await settle({ pgid: T.pgid, count: () => agentCount(T.countFile).lines, timeoutS: cfg.settleTimeout, pct: cfg.settlePct });
  const m = mark[t];
  r.lines = s.count - m.lines;
  r.dropped = (await droppedOf(T)) - m.dropped;
  r.drainS = s.count === m.lines ? 0 : (s.lastAt - s.t0) / 1000;
  r.cpuUsPerReq = ((s.cpu - m.cpu) * 1e6) / r.requests;
  r.settled = s.settled;
  const notes = [];
  if (!s.settled) notes.push(`NOT settled after ${cfg.settleTimeout}s`);
  if (T.mode.accessLog && r.lines < r.requests) notes.push(`${r.requests - r.lines} line(s) missing`);
  if (!T.mode.accessLog && r.lines > 0) notes.push(`${r.lines} unexpected line(s)`);
  if (r.dropped > 0) notes.push(`${r.dropped} dropped`);
  r.note = `lines ${r.lines} (requests ${r.requests}), drain ${fmt(r.drainS, 2)}s, gateway ${fmt(r.cpuUsPerReq, 1)} cpu-us/req${notes.length ? `  ${notes.join(', ')}` : ''}`;
}

// ---------------------------------------------------------------------------------------------- the p95 check
// The minute as GET /api/metrics says it, and a route's row in it (the bench route's by default).
async function minuteOf(T, route = 'bench') {
  const m = await control(T, '/api/metrics');
  return { ...m.minute, route: (m.routes ?? []).find((r) => r.route === route) ?? null };
}
// The run's last interval closes within 5 s: waits until the count read stops growing for 6 s.
async function stableMinute(T, count, route) {
  let last = await minuteOf(T, route), stableSince = Date.now();
  const end = Date.now() + 25_000;
  while (Date.now() < end && Date.now() - stableSince < 6000) {
    await sleep(1000);
    const now = await minuteOf(T, route);
    if (count(now) !== count(last)) stableSince = Date.now();
    last = now;
  }
  return last;
}
// One run of the check: wrk's histogram dumped, so its recorded latencies are read without wrk's correction.
async function checkRun(T, conns, url, tag, upstreamPgid, seconds = cfg.p95Duration) {
  const lua = path.join(TMP, 'conf', `dump-c${conns}.lua`);
  fs.writeFileSync(lua, wrkDumpLua(conns));
  const r = await runWrk({ ...cfg, conns, threads: Math.min(cfg.threads, conns) }, { ...T, url, wrkArgs: ['-s', lua] }, seconds, tag, upstreamPgid);
  if (!r.recorded) die(`${T.name}: wrk printed no LATENCY_DUMP line in the ${tag} run`);
  const rec = r.recorded;
  return { requests: r.requests, corrected: { p50: r.p50, p95: r.p95, p99: r.p99 }, recorded: { count: rec.count, p50: rec.percentile(50), p95: rec.percentile(95), p99: rec.percentile(99) } };
}

async function p95Check(T, conns, upstreamPgid) {
  log(`p95 check, ${conns} connection(s): waiting until ${T.name}'s last minute is empty`);
  const until = Date.now() + 80_000;
  while ((await minuteOf(T)).requests > 0) {
    if (Date.now() > until) die(`${T.name}: its last minute still holds requests after 80 s`);
    await sleep(2000);
  }
  await waitQuiet(cfg, 15);
  const w = await checkRun(T, conns, T.url, `p95-c${conns}`, upstreamPgid);
  const last = await stableMinute(T, (m) => m.requests);
  const r = w.recorded;
  const check = { conns, wrk: { requests: w.requests, ...r }, wrkCorrected: w.corrected, ring: { requests: last.requests, p50: last.p50, p95: last.p95, routeP95: last.route?.p95 ?? null } };
  check.p95Diff = (check.ring.p95 - r.p95) / r.p95;
  check.p50Diff = (check.ring.p50 - r.p50) / r.p50;
  log(`p95 check, ${conns} connection(s): wrk recorded p50 ${fmt(r.p50, 3)} p95 ${fmt(r.p95, 3)} ms over ${w.requests} answers (printed p95 ${fmt(w.corrected.p95, 3)}); `
    + `ring p50 ${fmt(last.p50, 3)} p95 ${fmt(last.p95, 3)} ms over ${last.requests} (p95 ${fmt(100 * check.p95Diff, 1)} %)`);
  return check;
}

// The same check where the service takes time (slow-upstream.mjs): the route `slow-c<conns>` is this run's
// alone, so its row in the minute holds this run's answers and nothing else, and no wait for an empty minute.
async function slowCheck(T, conns, slowUrl, upstreamPgid) {
  const route = `slow-c${conns}`;
  const auth = { origin: T.control, cookie: T.session, 'content-type': 'application/json' };
  const put = await fetch(`${T.control}/api/routes/${route}`, {
    method: 'PUT', headers: auth, signal: AbortSignal.timeout(10_000),
    body: JSON.stringify({ upstream: slowUrl, paths: [`/${route}`], rule: { roles: ['staff'] }, identity: 'headers' }),
  });
  if (put.status >= 300) die(`PUT /api/routes/${route}: HTTP ${put.status} ${(await put.text()).slice(0, 200)}`);
  const url = T.url.replace(/\/bench\/$/, `/${route}/`);
  await waitHttp(route, T.proc, url, { timeoutS: cfg.readyTimeout, headers: () => headerObject(T.headers) });
  await waitQuiet(cfg, 15);
  const w = await checkRun(T, conns, url, `p95-slow-c${conns}`, upstreamPgid, cfg.p95SlowDuration);
  const last = await stableMinute(T, (m) => m.route?.requests ?? 0, route);
  const r = w.recorded;
  const ring = { requests: last.route?.requests ?? 0, p95: last.route?.p95 ?? null };
  const check = { conns, wrk: { requests: w.requests, ...r }, wrkCorrected: w.corrected, ring, p95Diff: ring.p95 === null ? NaN : (ring.p95 - r.p95) / r.p95 };
  log(`p95 check, slow service, ${conns} connection(s): wrk recorded p95 ${fmt(r.p95, 3)} ms over ${w.requests} answers (printed ${fmt(w.corrected.p95, 3)}); `
    + `route ${route} p95 ${fmt(ring.p95, 3)} ms over ${ring.requests} (${fmt(100 * check.p95Diff, 2)} %)`);
  return check;
}

// ---------------------------------------------------------------------------------------------- main
const TGT = {}; // name -> { name, mode, url, headers, wrkArgs, pgid, proc, control, session, countFile }

async function main() {
  const { wrkV, ports, upstreamUrl, upstreamProc, expected } = await openBench(cfg, { repo: REPO, cli: GATEWAY_CLI, targets: targets.length });
  // wrk's done() prints the p95 its --latency table leaves out; no per-request Lua, so wrk keeps its fast path.
  const lua = path.join(TMP, 'conf', 'p95.lua');
  fs.writeFileSync(lua, 'done = function(summary, latency, requests)\n  io.write(string.format("P95_US %d\\n", latency:percentile(95)))\nend\n');

  targets.forEach((t, i) => {
    const mode = MODES[t];
    const fifo = path.join(TMP, `stdout-${i}.fifo`);
    const countFile = path.join(TMP, `stdout-${i}.count.json`);
    const mk = spawnSync('mkfifo', [fifo], { encoding: 'utf8' });
    if (mk.status !== 0) die(`mkfifo ${fifo}: ${mk.stderr}`);
    start(`agent-${t}`, process.execPath, [path.join(HERE, 'agent.mjs'), fifo, countFile], { cpu: cfg.loadCpu });
    const p = start(t, process.execPath, [path.join(REPO, 'bench', 'proxy', 'start-meerkat.mjs')], {
      cpu: cfg.proxyCpu,
      extraEnv: {
        BENCH_UPSTREAM: upstreamUrl, BENCH_PORT: String(ports[i]), BENCH_HOST: '127.0.0.1', BENCH_STDOUT: fifo,
        BENCH_ACCESS_LOG: mode.accessLog ? 'on' : 'off', BENCH_GATEWAY_ENV: JSON.stringify(mode.metrics ? {} : { GATEWAY_METRICS: 'off' }),
      },
    });
    TGT[t] = { name: t, mode, url: `http://127.0.0.1:${ports[i]}/bench/`, headers: [], wrkArgs: ['-s', lua], pgid: p.pid, proc: p, countFile };
  });
  for (const t of targets) {
    const T = TGT[t];
    const r = await waitHttp(t, T.proc, T.url, { timeoutS: cfg.readyTimeout, headers: () => (printed(T.proc, 'BENCH_SESSION').length ? headerObject(benchHeaders(T.proc)) : null) });
    if (r.body !== expected) log(`WARNING: ${t} answered 200 with a body different from the upstream's: ${JSON.stringify(r.body.slice(0, 200))}`);
    T.headers = benchHeaders(T.proc);
    T.control = printed(T.proc, 'BENCH_CONTROL')[0];
    T.session = printed(T.proc, 'BENCH_SESSION')[0];
  }
  log(`upstream ${upstreamUrl} | ${targets.map((t) => `${t} :${new URL(TGT[t].url).port}`).join(' | ')}`);
  log(cfg.pin ? `pinning: gateways on cpu ${cfg.proxyCpu}; upstream, agents + wrk on cpu ${cfg.loadCpu}` : 'pinning: off');

  const runs = await measure(cfg, targets, TGT, { warmOf, upstreamPgid: upstreamProc.pid, maxSeconds, runSlot, before, after });
  const pairs = await measurePairs(cfg, 'meerkat', targets, TGT, { upstreamPgid: upstreamProc.pid, before, after });
  const checks = [], slowChecks = [];
  if (targets.includes('meerkat+metrics')) {
    for (const c of cfg.p95Conns) checks.push(await p95Check(TGT['meerkat+metrics'], c, upstreamProc.pid));
    if (cfg.p95SlowConns.length) {
      const [slowPort] = await freePorts(1);
      // On the gateway's core: beside wrk it delays wrk's reads, and wrk's figures grow by what it waited.
      const slow = start('slow-upstream', process.execPath, [path.join(HERE, 'slow-upstream.mjs'), String(slowPort)], { cpu: cfg.proxyCpu });
      const slowUrl = `http://127.0.0.1:${slowPort}/`;
      await waitHttp('slow-upstream', slow, slowUrl);
      for (const c of cfg.p95SlowConns) slowChecks.push(await slowCheck(TGT['meerkat+metrics'], c, slowUrl, slow.pid));
    }
  }
  const sample = targets.includes('meerkat+access-log') ? agentCount(TGT['meerkat+access-log'].countFile).sample : '';
  report(runs, checks, pairs, { wrkV, expected, sample, slowChecks });
}

// ---------------------------------------------------------------------------------------------- report
function report(runs, checks, pairs, { wrkV, expected, sample, slowChecks }) {
  const med = medians(runs, targets);
  for (const t of targets) {
    const rs = runs.filter((r) => r.target === t);
    Object.assign(med[t], Object.fromEntries(['lines', 'drainS', 'cpuUsPerReq', 'p95'].map((k) => [k, median(rs.map((r) => r[k]))])));
    med[t].dropped = rs.reduce((s, r) => s + r.dropped, 0);
    med[t].missing = rs.reduce((s, r) => s + (MODES[t].accessLog ? Math.max(0, r.requests - r.lines) : 0), 0);
  }
  const cpuModel = os.cpus()[0]?.model ?? '?';
  const out = [];
  out.push(`observe bench ${new Date().toISOString()}  ${NCPU} CPU (${cpuModel}), kernel ${os.release()}`);
  out.push(`versions: nginx ${version(cfg.nginxBin, ['-v'], /nginx\/(\S+)/)}, wrk ${wrkV}, node ${process.version}, undici ${pkgVersion(REPO, 'undici')}, uws-pack ${pkgVersion(REPO, 'uWebSockets.js')}, hdr-histogram-js ${pkgVersion(REPO, 'hdr-histogram-js')}`);
  out.push(`gateway: ${gatewayBuild(REPO, GATEWAY_CLI)}, SQLite, one process per target, standard output on a FIFO read by an agent process`);
  out.push(`load: wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s --latency, ${cfg.rounds} round(s), warm-up ${cfg.warmupNode}s; `
    + (cfg.pin ? `gateways on cpu ${cfg.proxyCpu}, upstream + agents + wrk on cpu ${cfg.loadCpu}` : 'no pinning'));
  out.push(`request: GET /bench/ with a bearer token (role rule, identity headers); upstream: nginx return 200, ${Buffer.byteLength(expected)}-byte JSON`);
  out.push('');
  out.push(`== median over ${cfg.rounds} round(s) (lines: what the agent received per run; missing: requests answered without a line, all runs) ==`);
  out.push(table(['target', 'req/s', 'p50_ms', 'p95_ms', 'p99_ms', 'gw_cpu%', 'cpu_us/req', 'lines', 'missing', 'dropped', 'drain_s', 'errors', 'disturbed'],
    targets.map((t) => [t, fmt(med[t].rps, 0), fmt(med[t].p50, 3), fmt(med[t].p95, 3), fmt(med[t].p99, 3), fmt(med[t].proxyCpu, 0), fmt(med[t].cpuUsPerReq, 1),
      fmt(med[t].lines, 0), med[t].missing, med[t].dropped, fmt(med[t].drainS, 2), med[t].errors, `${med[t].noisy}/${cfg.rounds}`])));
  const verdicts = [];
  if (targets.includes('meerkat')) {
    const b = med.meerkat;
    // Per round as well: the ratio of each round's pair, so one slow round of the baseline shows as such.
    const perRound = (t) => {
      const xs = [];
      for (let round = 1; round <= cfg.rounds; round++) {
        const a = runs.find((r) => r.round === round && r.target === t), z = runs.find((r) => r.round === round && r.target === 'meerkat');
        if (a && z) xs.push(a.rps / z.rps);
      }
      return xs;
    };
    out.push('');
    out.push('== ratios against meerkat (of the medians; and each round\'s own ratio, then their median) ==');
    out.push(table(['target', 'rps/meerkat', 'rounds', 'median_of_rounds', 'p95/meerkat', 'cpu_per_req/meerkat'],
      targets.map((t) => [t, fmt(med[t].rps / b.rps, 3), perRound(t).map((x) => fmt(x, 3)).join(' '), fmt(median(perRound(t)), 3), fmt(med[t].p95 / b.p95, 2), fmt(med[t].cpuUsPerReq / b.cpuUsPerReq, 2)])));
    for (const [t, target] of [['meerkat+access-log', cfg.accessRatio], ['meerkat+metrics', cfg.metricsRatio]]) {
      if (!targets.includes(t)) continue;
      const ratio = med[t].rps / b.rps;
      // The verdict reads the rounds' own ratios: one number of a noisy machine is not a verdict.
      const v = barVerdict(perRound(t), target);
      verdicts.push({ target: t, ratio, want: target, holds: v.holds, verdict: v.word, interval: [v.lo, v.hi] });
      out.push(`target: ${t} keeps >= ${fmt(100 * target, 0)} % of meerkat's req/s: ${fmt(100 * ratio, 1)} % of the medians; median round ${fmt(100 * median(perRound(t)), 1)} %, `
        + `90 % interval ${fmt(100 * v.lo, 1)}-${fmt(100 * v.hi, 1)} % -> ${v.word}`);
    }
  }
  const side = sideBySide(pairs, 'meerkat', [['meerkat+access-log', cfg.accessRatio], ['meerkat+metrics', cfg.metricsRatio]], cfg);
  out.push(...side.lines);
  verdicts.push(...side.verdicts);
  if (checks.length) {
    out.push('');
    out.push('== p95 check: meerkat+metrics, one run each, its last minute (GET /api/metrics) against the latencies wrk recorded ==');
    out.push(table(['conns', 'wrk_answers', 'ring_requests', 'wrk_p50_ms', 'ring_p50_ms', 'wrk_p95_ms', 'ring_p95_ms', 'route_p95_ms', 'p95_ring-wrk', 'p95_ring-wrk_ms', 'wrk_printed_p95_ms'],
      checks.map((c) => [c.conns, c.wrk.requests, c.ring.requests, fmt(c.wrk.p50, 3), fmt(c.ring.p50, 3), fmt(c.wrk.p95, 3), fmt(c.ring.p95, 3), fmt(c.ring.routeP95, 3),
        `${fmt(100 * c.p95Diff, 1)} %`, fmt(c.ring.p95 - c.wrk.p95, 3), fmt(c.wrkCorrected.p95, 3)])));
    out.push('(wrk_*: the latencies wrk recorded, its coordinated-omission samples taken out; wrk_printed_p95: with them, as wrk prints it. The ring keeps two')
    out.push(' significant digits: a percentile within 1 %. wrk times from its write to its read, the gateway from the parsed request to the end of its answer)');
  }
  if (slowChecks.length) {
    out.push('');
    out.push('== p95 check, a service taking 0.2-3 s (slow-upstream.mjs): the route\'s p95 in the minute against wrk\'s ==');
    out.push(table(['conns', 'wrk_answers', 'ring_requests', 'wrk_p50_ms', 'wrk_p95_ms', 'ring_p95_ms', 'p95_ring-wrk', 'p95_ring-wrk_ms', 'wrk_printed_p95_ms'],
      slowChecks.map((c) => [c.conns, c.wrk.requests, c.ring.requests, fmt(c.wrk.p50, 3), fmt(c.wrk.p95, 3), fmt(c.ring.p95, 3), `${fmt(100 * c.p95Diff, 2)} %`, fmt(c.ring.p95 - c.wrk.p95, 3),
        fmt(c.wrkCorrected.p95, 3)])));
    for (const c of slowChecks) {
      // The ring also has the readiness GET and the calls in flight when wrk stopped (at most one a connection).
      const counted = c.ring.requests >= c.wrk.requests && c.ring.requests <= c.wrk.requests + c.conns + 1;
      const agrees = Math.abs(c.p95Diff) <= 0.01 && counted;
      verdicts.push({ target: `p95 slow service c${c.conns}`, ratio: c.p95Diff, want: 0.01, holds: agrees, verdict: agrees ? 'HOLDS' : 'DOES NOT HOLD' });
      out.push(`target: the ring's p95 agrees with the latencies wrk recorded within the histograms' precision (1 %), every answer counted, ${c.conns} connection(s): `
        + `${fmt(100 * c.p95Diff, 2)} %, ${c.ring.requests} of ${c.wrk.requests} answers -> ${agrees ? 'HOLDS' : 'DOES NOT HOLD'}`);
    }
  }
  out.push('');
  out.push('== per run ==');
  out.push(perRunTable(runs, [
    { head: 'p95_ms', cell: (r) => fmt(r.p95, 3) },
    { head: 'requests', cell: (r) => r.requests },
    { head: 'lines', cell: (r) => r.lines },
    { head: 'dropped', cell: (r) => r.dropped },
    { head: 'drain_s', cell: (r) => fmt(r.drainS, 2) },
    { head: 'cpu_us/req', cell: (r) => fmt(r.cpuUsPerReq, 1) },
  ]));
  if (sample) out.push(`\na line the agent of meerkat+access-log received: ${sample}`);
  out.push(...warnings(runs, cfg));
  const unsettled = runs.filter((r) => !r.settled).length;
  if (unsettled) out.push(`WARNING: ${unsettled} run(s) did not settle within SETTLE_TIMEOUT=${cfg.settleTimeout}s: the next run overlapped their leftovers`);
  console.log(out.join('\n'));
  const json = { date: new Date().toISOString(), host: { ncpu: NCPU, cpuModel, kernel: os.release() }, config: { ...cfg, targets }, medians: med, verdicts, checks, slowChecks, sample, runs, pairs };
  fs.writeFileSync(path.join(TMP, 'results.json'), JSON.stringify(json, null, 2));
  if (cfg.outJson) { fs.writeFileSync(cfg.outJson, JSON.stringify(json, null, 2)); log(`results written to ${cfg.outJson}`); }
}

finish(main);
