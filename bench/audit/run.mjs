#!/usr/bin/env node
// run.mjs - what endpoint audit costs the data plane, run by hand (never part of the test suite).
// See bench/audit/README.md.
//
// Starts, all on 127.0.0.1 with free ports: the upstream nginx of the proxy bench (bench/proxy/upstream.conf.template,
// pinned on LOAD_CPU) and one gateway per target (start-meerkat.mjs, licensed edition, pinned on PROXY_CPU):
//   meerkat             the route has an OpenAPI contract, no audit rule
//   meerkat+audit       the operation the load calls is audited: fields, body kept
//   meerkat+audit-off   its rule is there, switched off (another operation of the route on)
// and drives each with `wrk -t1 -cN -dS --latency -s <POST script>` (bench/lib/load.mjs: quiet box, warm-up,
// rotating rounds, DISTURBED runs repeated). After every run it waits until the gateway has written what the
// load left behind and counts the lines written (audit_events, part operations) and the lines dropped
// (GET /api/settings/audit). Prints medians, ratios against meerkat, and whether meerkat+audit keeps
// TARGET_RATIO of meerkat's throughput.
import Database from 'libsql';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPinning, commonConfig, helpFromReadme, NCPU, num, targetList } from '../lib/config.mjs';
import { benchHeaders, headerObject, printed } from '../lib/headers.mjs';
import { cpuSeconds, measure, measurePairs, pairsSeconds } from '../lib/load.mjs';
import { settle } from '../lib/settle.mjs';
import { openBench } from '../lib/upstream.mjs';
import { begin, die, finish, log, pkgVersion, start, TMP, version, waitHttp } from '../lib/procs.mjs';
import { fmt, gatewayBuild, median, medians, perRunTable, sideBySide, table, warnings } from '../lib/report.mjs';
import { MODES, ORDER_LINE, REQUEST, rulesFor, wrkLua } from './workload.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const GATEWAY_CLI = path.join(REPO, 'dist', 'src', 'cli.js');
helpFromReadme(path.join(HERE, 'README.md'));

// ---------------------------------------------------------------------------------------------- config
const env = process.env;
const cfg = {
  ...commonConfig(),
  readyTimeout: num('MEERKAT_READY_TIMEOUT', 150, 1),
  settleTimeout: num('SETTLE_TIMEOUT', 60, 1),
  settlePct: num('SETTLE_PCT', 10, 1),
  targetRatio: num('TARGET_RATIO', 0.95, 0),
  pairs: num('PAIRS', 0, 0),
};
const targets = targetList(Object.keys(MODES), Object.keys(MODES));
if (!fs.existsSync(GATEWAY_CLI)) die(`${path.relative(REPO, GATEWAY_CLI)} is missing: run npm run build first`);
checkPinning(cfg);
const warmOf = () => cfg.warmupNode;
// A run, its cooldown, and the few seconds a gateway usually needs to write what the load left behind.
const runSlot = cfg.duration + cfg.cooldown + 3 + 10;
const maxSeconds = num('MAX_SECONDS', Math.ceil(60 + cfg.waitIdle + cfg.readyTimeout
  + targets.length * (warmOf() + cfg.cooldown + 3 + 10) + (cfg.rounds * targets.length + cfg.retries) * runSlot + pairsSeconds(cfg, targets, runSlot)), 10);

begin(cfg, { tmpPrefix: 'meerkat-audit-bench-', maxSeconds, cwd: REPO });

// ---------------------------------------------------------------------------------------------- the trail
// Lines written so far by one gateway: counted in its SQLite file (a read; the gateway writes in WAL mode).
function lineCounter(file) {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  const stmt = db.prepare("SELECT count(*) AS n FROM audit_events WHERE part = 'operations'");
  return { count: () => Number(stmt.get().n), close: () => db.close() };
}
async function control(T, p) {
  const r = await fetch(`${T.control}${p}`, { headers: { cookie: T.session }, signal: AbortSignal.timeout(10_000) });
  const text = await r.text();
  if (r.status !== 200) die(`${T.name}: GET ${p}: HTTP ${r.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}
const droppedOf = async (T) => (await control(T, '/api/settings/audit')).dropped?.audit ?? NaN;

// Before a run: where the counters stand. After it: wait until the gateway is idle again (its CPU below
// SETTLE_PCT % of a core over a 250 ms look) with no new line in that look, then take the differences.
const mark = {};
async function before(t) {
  const T = TGT[t];
  mark[t] = { lines: T.lines.count(), cpu: cpuSeconds(T.pgid), dropped: await droppedOf(T) };
}
async function after(t, r) {
  const T = TGT[t];
  const { count: lines, cpu, lastAt: lastLine, t0, settled } = await settle({ pgid: T.pgid, count: T.lines.count, timeoutS: cfg.settleTimeout, pct: cfg.settlePct });
  const m = mark[t];
  r.lines = lines - m.lines;
  r.dropped = (await droppedOf(T)) - m.dropped;
  r.drainS = lines === m.lines ? 0 : (lastLine - t0) / 1000; // the last line landed this long after wrk ended
  r.cpuUsPerReq = ((cpu - m.cpu) * 1e6) / r.requests; // the run and its drain
  r.settled = settled;
  const notes = [];
  if (!settled) notes.push(`NOT settled after ${cfg.settleTimeout}s`);
  if (T.mode === 'on' && r.lines < r.requests) notes.push(`${r.requests - r.lines} line(s) missing`);
  if (T.mode !== 'on' && r.lines > 0) notes.push(`${r.lines} unexpected line(s)`);
  if (r.dropped > 0) notes.push(`${r.dropped} dropped`);
  r.note = `lines ${r.lines} (requests ${r.requests}), drain ${fmt(r.drainS, 2)}s, gateway ${fmt(r.cpuUsPerReq, 1)} cpu-us/req${notes.length ? `  ${notes.join(', ')}` : ''}`;
}

// ---------------------------------------------------------------------------------------------- main
const TGT = {}; // name -> { name, mode, url, headers, wrkArgs, pgid, proc, control, session, lines }

async function main() {
  const { wrkV, ports, upstreamUrl, upstreamProc, expected } = await openBench(cfg, { repo: REPO, cli: GATEWAY_CLI, targets: targets.length });
  const lua = path.join(TMP, 'conf', 'request.lua');
  fs.writeFileSync(lua, wrkLua());

  // All gateways start at once (their boots overlap); each is idle except while it is under load.
  targets.forEach((t, i) => {
    const p = start(t, process.execPath, [path.join(HERE, 'start-meerkat.mjs')], {
      cpu: cfg.proxyCpu,
      extraEnv: { BENCH_UPSTREAM: upstreamUrl, BENCH_PORT: String(ports[i]), BENCH_HOST: '127.0.0.1', AUDIT_MODE: MODES[t] },
    });
    TGT[t] = { name: t, mode: MODES[t], url: `http://127.0.0.1:${ports[i]}${REQUEST.path}`, headers: [], wrkArgs: ['-s', lua], pgid: p.pid, proc: p };
  });
  for (const t of targets) {
    const T = TGT[t];
    const init = { method: REQUEST.method, body: REQUEST.body, headers: REQUEST.headers };
    // The command prints its lines once configured: ask only then.
    const r = await waitHttp(t, T.proc, T.url, { timeoutS: cfg.readyTimeout, init, headers: () => (printed(T.proc, 'BENCH_DB').length ? headerObject(benchHeaders(T.proc)) : null) });
    if (r.body !== expected) log(`WARNING: ${t} answered 200 with a body different from the upstream's: ${JSON.stringify(r.body.slice(0, 200))}`);
    T.headers = benchHeaders(T.proc);
    T.control = printed(T.proc, 'BENCH_CONTROL')[0];
    T.session = printed(T.proc, 'BENCH_SESSION')[0];
    T.lines = lineCounter(printed(T.proc, 'BENCH_DB')[0]);
  }
  log(`upstream ${upstreamUrl} | ${targets.map((t) => `${t} :${new URL(TGT[t].url).port}`).join(' | ')} | ${REQUEST.method} ${REQUEST.path}`);
  log(cfg.pin ? `pinning: gateways on cpu ${cfg.proxyCpu}; upstream + wrk on cpu ${cfg.loadCpu}` : 'pinning: off');

  const runs = await measure(cfg, targets, TGT, { warmOf, upstreamPgid: upstreamProc.pid, maxSeconds, runSlot, before, after });
  const pairs = await measurePairs(cfg, 'meerkat', targets, TGT, { upstreamPgid: upstreamProc.pid, before, after });
  // The newest lines are the calls in flight when wrk stopped (499, aborted): show an answered one.
  const newest = targets.includes('meerkat+audit') ? (await control(TGT['meerkat+audit'], '/api/audit?part=operations&limit=100')).events ?? [] : [];
  const sample = newest.find((e) => e.attributes?.['http.response.status_code'] === 200) ?? newest[0];
  const totals = {};
  for (const t of targets) totals[t] = { lines: TGT[t].lines.count(), dropped: await droppedOf(TGT[t]) };
  for (const t of targets) TGT[t].lines.close();
  report(runs, pairs, { wrkV, expected, sample, totals });
}

// ---------------------------------------------------------------------------------------------- report
function report(runs, pairs, { wrkV, expected, sample, totals }) {
  const med = medians(runs, targets);
  for (const t of targets) {
    const rs = runs.filter((r) => r.target === t);
    Object.assign(med[t], Object.fromEntries(['lines', 'drainS', 'cpuUsPerReq'].map((k) => [k, median(rs.map((r) => r[k]))])));
    med[t].linesPerReq = median(rs.map((r) => r.lines / r.requests));
    med[t].dropped = rs.reduce((s, r) => s + r.dropped, 0);
  }
  const cpuModel = os.cpus()[0]?.model ?? '?';
  const out = [];
  out.push(`audit bench ${new Date().toISOString()}  ${NCPU} CPU (${cpuModel}), kernel ${os.release()}`);
  out.push(`versions: nginx ${version(cfg.nginxBin, ['-v'], /nginx\/(\S+)/)}, wrk ${wrkV}, node ${process.version}, undici ${pkgVersion(REPO, 'undici')}, uws-pack ${pkgVersion(REPO, 'uWebSockets.js')}`);
  out.push(`gateway: ${gatewayBuild(REPO, GATEWAY_CLI)}, GATEWAY_EDITION=licensed, SQLite, one process per target`);
  out.push(`load: wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s --latency, ${cfg.rounds} round(s), warm-up ${cfg.warmupNode}s; `
    + (cfg.pin ? `gateways on cpu ${cfg.proxyCpu}, upstream + wrk on cpu ${cfg.loadCpu}` : 'no pinning'));
  out.push(`request: ${REQUEST.method} ${REQUEST.path}, ${Buffer.byteLength(REQUEST.body)}-byte JSON body, bearer token (role rule); upstream: nginx return 200, ${Buffer.byteLength(expected)}-byte JSON`);
  out.push(`audit rule (meerkat+audit): ${JSON.stringify(rulesFor('on').operations[ORDER_LINE])}`);
  out.push('');
  out.push(`== median over ${cfg.rounds} round(s) (lines: audit lines written per run; drain: seconds after the run until the last one was written) ==`);
  out.push(table(['target', 'req/s', 'p50_ms', 'p90_ms', 'p99_ms', 'gw_cpu%', 'cpu_us/req', 'lines', 'lines/req', 'drain_s', 'dropped', 'errors', 'disturbed'],
    targets.map((t) => [t, fmt(med[t].rps, 0), fmt(med[t].p50, 3), fmt(med[t].p90, 3), fmt(med[t].p99, 3), fmt(med[t].proxyCpu, 0), fmt(med[t].cpuUsPerReq, 1),
      fmt(med[t].lines, 0), fmt(med[t].linesPerReq, 3), fmt(med[t].drainS, 2), med[t].dropped, med[t].errors, `${med[t].noisy}/${cfg.rounds}`])));
  let verdict = null;
  if (targets.includes('meerkat')) {
    const b = med.meerkat;
    out.push('');
    out.push('== ratios of the medians against meerkat (req/s: higher is better; latency and cpu per request: lower is better) ==');
    out.push(table(['target', 'rps/meerkat', 'p50/meerkat', 'p99/meerkat', 'cpu_per_req/meerkat'],
      targets.map((t) => [t, fmt(med[t].rps / b.rps, 3), fmt(med[t].p50 / b.p50, 2), fmt(med[t].p99 / b.p99, 2), fmt(med[t].cpuUsPerReq / b.cpuUsPerReq, 2)])));
    if (targets.includes('meerkat+audit')) {
      const ratio = med['meerkat+audit'].rps / b.rps;
      verdict = { ratio, target: cfg.targetRatio, holds: ratio >= cfg.targetRatio };
      out.push('');
      out.push(`target: meerkat+audit keeps >= ${fmt(100 * cfg.targetRatio, 0)} % of meerkat's req/s: ${fmt(100 * ratio, 1)} % -> ${verdict.holds ? 'HOLDS' : 'DOES NOT HOLD'}`);
    }
  }
  const side = sideBySide(pairs, 'meerkat', [['meerkat+audit', cfg.targetRatio]], cfg);
  out.push(...side.lines);
  out.push('');
  out.push('== per run: requests = answered within the run (wrk); lines = audit lines written, the calls in flight when wrk stopped included;');
  out.push('   cpu_us/req = the gateway\'s CPU from the run\'s start until it settled, per request; cpu columns as in bench/proxy ==');
  out.push(perRunTable(runs, [
    { head: 'requests', cell: (r) => r.requests },
    { head: 'lines', cell: (r) => r.lines },
    { head: 'dropped', cell: (r) => r.dropped },
    { head: 'drain_s', cell: (r) => fmt(r.drainS, 2) },
    { head: 'cpu_us/req', cell: (r) => fmt(r.cpuUsPerReq, 1) },
  ]));
  out.push('');
  out.push(`totals since start (warm-ups and readiness calls included): ${targets.map((t) => `${t} ${totals[t].lines} lines, ${totals[t].dropped} dropped`).join('; ')}`);
  if (sample) out.push(`a line of meerkat+audit, as GET /api/audit?part=operations answers it: ${JSON.stringify(sample)}`);
  out.push(...warnings(runs, cfg));
  const unsettled = runs.filter((r) => !r.settled).length;
  if (unsettled) out.push(`WARNING: ${unsettled} run(s) did not settle within SETTLE_TIMEOUT=${cfg.settleTimeout}s: the next run overlapped their leftovers`);
  console.log(out.join('\n'));

  const json = { date: new Date().toISOString(), host: { ncpu: NCPU, cpuModel, kernel: os.release() }, config: { ...cfg, targets }, request: REQUEST, medians: med, verdict, sideBySide: side.verdicts, totals, sample, runs, pairs };
  fs.writeFileSync(path.join(TMP, 'results.json'), JSON.stringify(json, null, 2));
  if (cfg.outJson) { fs.writeFileSync(cfg.outJson, JSON.stringify(json, null, 2)); log(`results written to ${cfg.outJson}`); }
}

finish(main);
