#!/usr/bin/env node
// run.mjs - data-plane proxy benchmark, run by hand (never part of the test suite). See bench/proxy/README.md.
//
// Starts, all on 127.0.0.1 with free ports:
//   upstream   nginx "return 200" + small JSON (upstream.conf.template), 1 worker, pinned on LOAD_CPU
//   nginx      nginx reverse proxy (nginx-proxy.conf.template), 1 worker, keep-alive pool to the upstream, PROXY_CPU
//   bare-uws   bare-uws-proxy.mjs (uWS + undici Pool), PROXY_CPU
//   floor      only when listed in TARGETS: floor-proxy.mjs (uWS + raw keep-alive sockets, nothing else), PROXY_CPU
//   meerkat    the gateway: `sh -c "$MEERKAT_CMD"` [default: start-meerkat.mjs, which runs dist/src/cli.js with a
//              protected route], PROXY_CPU (gets BENCH_UPSTREAM / BENCH_PORT); its `BENCH_HEADER Name: value` stdout
//              lines are added to the request headers (the bearer token). In TARGETS by default when dist/ is built.
//   meerkat-base  only when listed in TARGETS: another build of the gateway, `sh -c "$MEERKAT_BASE_CMD"` (e.g.
//              `exec node <other checkout>/bench/proxy/start-meerkat.mjs`), started like meerkat: two builds in one run
//   direct     only when listed in TARGETS: wrk straight at the upstream (ceiling of this box, no proxy)
// and drives each target with `wrk -t1 -cN -dS --latency` (pinned on LOAD_CPU, with the upstream), targets
// alternating within each round. Prints medians over rounds, ratios vs nginx and vs bare-uws, and every run.
// PAIRS=N adds N side-by-side rounds: bare-uws (or PAIR_BASE) and each other target loaded at once, compared by
// CPU per request.
// Everything started is in its own process group and is stopped by that id on exit, Ctrl-C, error or watchdog.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPinning, commonConfig, helpFromReadme, NCPU, num } from '../lib/config.mjs';
import { benchHeaders, HEADER_RE, headerName, headerObject, mergeHeaders, printed as printedLines } from '../lib/headers.mjs';
import { cpuSeconds, measure, measurePairs, pairsSeconds } from '../lib/load.mjs';
import { assertLoopback, begin, die, finish, freePorts, log, pkgVersion, preflight, render, start, TMP, version, waitHttp, waitLine } from '../lib/procs.mjs';
import { fmt, gatewayBuild, medians, perRunTable, sideBySide, staleBuild, table, warnings } from '../lib/report.mjs';
import { settle } from '../lib/settle.mjs';
import { BIG_ANSWER_BYTES, startUpstream } from '../lib/upstream.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const T0 = Date.now();
helpFromReadme(path.join(HERE, 'README.md'));

// ---------------------------------------------------------------------------------------------- config
const env = process.env;
// LOAD=small: GET /bench/, a 90-byte answer. LOAD=large: POST /bench/big with a 16 KiB body, a 256 KiB answer
// (the streaming paths of both directions).
const LOADS = {
  small: { path: 'bench/', title: 'GET /bench/, no body; upstream answers a 90-byte JSON' },
  large: { path: 'bench/big', title: `POST /bench/big with a 16 KiB body; upstream answers ${BIG_ANSWER_BYTES / 1024} KiB`, bodyBytes: 16 * 1024 },
};
const LOAD = env.LOAD || 'small';
if (!LOADS[LOAD]) die(`LOAD: unknown load "${LOAD}" (known: ${Object.keys(LOADS).join(', ')})`);
const load = LOADS[LOAD];
const cfg = {
  ...commonConfig(),
  meerkatCmd: env.MEERKAT_CMD || '',
  meerkatBaseCmd: env.MEERKAT_BASE_CMD || '',
  // The target the side-by-side rounds compare every other one with.
  pairBase: env.PAIR_BASE || 'bare-uws',
  meerkatCmdDefault: false, // true when meerkatCmd is the built-in start-meerkat.mjs
  meerkatUrl: env.MEERKAT_URL || `http://127.0.0.1:{BENCH_PORT}/${load.path}`,
  meerkatHeaders: (env.MEERKAT_HEADERS || '').split(/\r?\n|\\n/).map((s) => s.trim()).filter(Boolean),
  meerkatReady: num('MEERKAT_READY_TIMEOUT', 150, 1),
  pairs: num('PAIRS', 0, 0),
  // Extra node flags for bare-uws and floor (e.g. '--cpu-prof --cpu-prof-dir=/tmp/peer-prof'), space-separated.
  peerNodeArgs: (env.PEER_NODE_ARGS || '').split(' ').filter(Boolean),
  settleTimeout: num('SETTLE_TIMEOUT', 30, 1),
  settlePct: num('SETTLE_PCT', 10, 1),
};
for (const h of cfg.meerkatHeaders) if (!HEADER_RE.test(h)) die(`MEERKAT_HEADERS: "${h}" is not "Name: value"`);

const ALL = ['direct', 'nginx', 'bare-uws', 'floor', 'meerkat', 'meerkat-base'];
const NODE_TARGETS = new Set(['bare-uws', 'floor', 'meerkat', 'meerkat-base']);
/** The gateway's builds: started by a command, their BENCH_HEADER lines read. */
const GATEWAYS = new Set(['meerkat', 'meerkat-base']);
// The gateway's compiled CLI: with it (and no MEERKAT_CMD), meerkat is benchmarked by default through start-meerkat.mjs.
const GATEWAY_CLI = path.join(REPO, 'dist', 'src', 'cli.js');
const built = fs.existsSync(GATEWAY_CLI);
const targets = (env.TARGETS || `nginx,bare-uws${cfg.meerkatCmd || built ? ',meerkat' : ''}`).split(',').map((s) => s.trim()).filter(Boolean);
for (const t of targets) if (!ALL.includes(t)) die(`TARGETS: unknown target "${t}" (known: ${ALL.join(', ')})`);
if (new Set(targets).size !== targets.length || !targets.length) die('TARGETS: list each target once');
if (!env.TARGETS && !cfg.meerkatCmd && !built) log(`meerkat skipped: ${path.relative(REPO, GATEWAY_CLI)} is missing (run npm run build first, or set MEERKAT_CMD)`);
if (targets.includes('meerkat') && !cfg.meerkatCmd) {
  if (!built) die(`TARGETS has meerkat but ${path.relative(REPO, GATEWAY_CLI)} is missing: run npm run build first (or set MEERKAT_CMD)`);
  cfg.meerkatCmd = `exec ${JSON.stringify(process.execPath)} bench/proxy/start-meerkat.mjs`;
  cfg.meerkatCmdDefault = true;
}
if (targets.includes('meerkat-base') && !cfg.meerkatBaseCmd) die('TARGETS has meerkat-base: set MEERKAT_BASE_CMD to the command that starts the other build');
if (cfg.pairs > 0 && !targets.includes(cfg.pairBase)) die(`PAIR_BASE: "${cfg.pairBase}" is not in TARGETS`);
if (cfg.meerkatCmd) assertLoopback(cfg.meerkatUrl.replaceAll('{BENCH_PORT}', '1').replaceAll('${BENCH_PORT}', '1'), 'MEERKAT_URL');
checkPinning(cfg);
const warmOf = (t) => (NODE_TARGETS.has(t) ? cfg.warmupNode : cfg.warmup);
const runSlot = cfg.duration + cfg.cooldown + 3;
const maxSeconds = num('MAX_SECONDS', Math.ceil(60 + cfg.waitIdle + targets.filter((t) => GATEWAYS.has(t)).length * cfg.meerkatReady
  + targets.reduce((s, t) => s + warmOf(t) + cfg.cooldown + 3, 0) + (cfg.rounds * targets.length + cfg.retries) * runSlot
  + pairsSeconds(cfg, targets, runSlot + cfg.settleTimeout)), 10);

begin(cfg, { tmpPrefix: 'meerkat-proxy-bench-', maxSeconds, cwd: REPO });

// ---------------------------------------------------------------------------------------------- main
const TGT = {}; // name -> { name, url, headers, pgid, proc }

async function main() {
  const wrkV = preflight(cfg);
  // A stale build would benchmark old code: say so (the run goes on).
  if (targets.includes('meerkat') && cfg.meerkatCmdDefault && staleBuild(path.join(REPO, 'src'), GATEWAY_CLI)) {
    log('WARNING: some src/ file is newer than dist/: meerkat runs the last build (npm run build to refresh it)');
  }
  const [upPort, ngxPort, meerkatPort, basePort] = await freePorts(4);
  const upstreamUrl = `http://127.0.0.1:${upPort}/`;

  // upstream
  // The large load's wrk script.
  const wrkArgs = [];
  if (load.bodyBytes) {
    const lua = path.join(TMP, 'conf', 'post.lua');
    fs.writeFileSync(lua, `wrk.method = "POST"\nwrk.body = string.rep("b", ${load.bodyBytes})\nwrk.headers["Content-Type"] = "application/octet-stream"\n`);
    wrkArgs.push('-s', lua);
  }
  const { upstreamProc, expected } = await startUpstream(cfg, REPO, upPort, load.path);
  if (targets.includes('direct')) TGT.direct = { name: 'direct', url: `${upstreamUrl}${load.path}`, headers: [], pgid: null, wrkArgs };

  // nginx reverse proxy
  if (targets.includes('nginx')) {
    const conf = render(path.join(HERE, 'nginx-proxy.conf.template'), { PREFIX: TMP, UP_PORT: upPort, PROXY_PORT: ngxPort, POOL: cfg.pool });
    const p = start('nginx-proxy', cfg.nginxBin, ['-p', `${TMP}/`, '-e', `${TMP}/logs/nginx-proxy-error.log`, '-c', conf], { cpu: cfg.proxyCpu });
    TGT.nginx = { name: 'nginx', url: `http://127.0.0.1:${ngxPort}/${load.path}`, headers: [], pgid: p.pid, proc: p, wrkArgs };
  }
  // bare uWS + undici peer (listens on port 0, prints its port)
  if (targets.includes('bare-uws')) {
    const p = start('bare-uws', process.execPath, [...cfg.peerNodeArgs, path.join(HERE, 'bare-uws-proxy.mjs'), '0', upstreamUrl.slice(0, -1), String(cfg.pool)], { cpu: cfg.proxyCpu });
    const port = (await waitLine(p, /listening on 127\.0\.0\.1:(\d+)/))[1];
    TGT['bare-uws'] = { name: 'bare-uws', url: `http://127.0.0.1:${port}/${load.path}`, headers: [], pgid: p.pid, proc: p, wrkArgs };
  }
  // the floor: uWS and raw sockets, nothing else
  if (targets.includes('floor')) {
    const p = start('floor', process.execPath, [...cfg.peerNodeArgs, path.join(HERE, 'floor-proxy.mjs'), '0', upstreamUrl.slice(0, -1), String(cfg.pool)], { cpu: cfg.proxyCpu });
    const port = (await waitLine(p, /listening on 127\.0\.0\.1:(\d+)/))[1];
    TGT.floor = { name: 'floor', url: `http://127.0.0.1:${port}/${load.path}`, headers: [], pgid: p.pid, proc: p, wrkArgs };
  }
  // Meerkat (optional hook), and another build of it to compare with
  const gateway = (name, cmd, port) => {
    const url = cfg.meerkatUrl.replaceAll('{BENCH_PORT}', String(port)).replaceAll('${BENCH_PORT}', String(port));
    assertLoopback(url, 'MEERKAT_URL');
    const p = start(name, '/bin/sh', ['-c', cmd], {
      cpu: cfg.proxyCpu,
      extraEnv: { BENCH_UPSTREAM: upstreamUrl, BENCH_PORT: String(port), BENCH_HOST: '127.0.0.1', BENCH_POOL: String(cfg.pool) },
    });
    TGT[name] = { name, url, headers: cfg.meerkatHeaders, pgid: p.pid, proc: p, wrkArgs };
  };
  if (targets.includes('meerkat')) gateway('meerkat', cfg.meerkatCmd, meerkatPort);
  if (targets.includes('meerkat-base')) gateway('meerkat-base', cfg.meerkatBaseCmd, basePort);
  for (const t of targets) {
    if (t === 'direct') continue;
    const T = TGT[t];
    // meerkat: MEERKAT_HEADERS plus the command's BENCH_HEADER lines (which win on the same name), re-read on every
    // attempt; start-meerkat.mjs prints them with BENCH_CONTROL once configured (no header with BENCH_ROUTE=public),
    // so wait for that line before asking.
    const hdrs = !GATEWAYS.has(t) ? headerObject(T.headers) : () => {
      const printed = benchHeaders(T.proc);
      if ((t === 'meerkat-base' || cfg.meerkatCmdDefault) && !printed.length && !printedLines(T.proc, 'BENCH_CONTROL').length) return null;
      return headerObject(mergeHeaders(T.headers, printed));
    };
    const r = await waitHttp(t, T.proc, T.url, { timeoutS: GATEWAYS.has(t) ? cfg.meerkatReady : 10, headers: hdrs });
    if (GATEWAYS.has(t)) {
      const printed = benchHeaders(T.proc);
      T.headers = mergeHeaders(T.headers, printed);
      if (printed.length) log(`${t}: headers from the command: ${printed.map(headerName).join(', ')} (values not shown)`);
    }
    if (r.body !== expected) {
      if (GATEWAYS.has(t)) log(`WARNING: ${t} answered 200 with a body different from the upstream's: ${JSON.stringify(r.body.slice(0, 200))}`);
      else die(`${t}: body differs from the upstream's: ${JSON.stringify(r.body.slice(0, 200))}`);
    }
  }
  log(`upstream ${upstreamUrl} | ${targets.map((t) => `${t} ${TGT[t].url}`).join(' | ')}`);
  log(cfg.pin ? `pinning: proxies on cpu ${cfg.proxyCpu}; upstream + wrk on cpu ${cfg.loadCpu}` : 'pinning: off');

  // quiet box, warm-up, then rounds: targets alternate, the order rotating each round
  const runs = await measure(cfg, targets, TGT, { warmOf, upstreamPgid: upstreamProc.pid, maxSeconds, runSlot });
  const pairs = await measurePairs(cfg, cfg.pairBase, targets.filter((t) => t !== 'direct'), TGT, { upstreamPgid: upstreamProc.pid, before, after });
  report(runs, pairs, { wrkV });
}

// Side by side: a target's CPU from just before its run until it is idle again, per request answered.
const mark = {};
async function before(t) {
  mark[t] = cpuSeconds(TGT[t].pgid);
}
async function after(t, r) {
  const s = await settle({ pgid: TGT[t].pgid, count: () => 0, timeoutS: cfg.settleTimeout, pct: cfg.settlePct });
  r.cpuUsPerReq = ((s.cpu - mark[t]) * 1e6) / r.requests;
  if (!s.settled) r.note = `NOT settled after ${cfg.settleTimeout}s`;
}

// ---------------------------------------------------------------------------------------------- report
function report(runs, pairs, { wrkV }) {
  const med = medians(runs, targets);
  const cpuModel = os.cpus()[0]?.model ?? '?';
  const out = [];
  out.push(`proxy bench ${new Date().toISOString()}  ${NCPU} CPU (${cpuModel}), kernel ${os.release()}`);
  out.push(`versions: nginx ${version(cfg.nginxBin, ['-v'], /nginx\/(\S+)/)}, wrk ${wrkV}, node ${process.version}, undici ${pkgVersion(REPO, 'undici')}, uws-pack ${pkgVersion(REPO, 'uWebSockets.js')}`);
  out.push(`load: wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s --latency, ${cfg.rounds} round(s), warm-up ${cfg.warmup}s (node targets ${cfg.warmupNode}s); `
    + (cfg.pin ? `proxy on cpu ${cfg.proxyCpu}, upstream + wrk on cpu ${cfg.loadCpu}` : 'no pinning'));
  if (targets.includes('meerkat')) out.push(`meerkat: ${cfg.meerkatCmd}${cfg.meerkatCmdDefault ? ` (${gatewayBuild(REPO, GATEWAY_CLI)})` : ''}`);
  if (targets.includes('meerkat-base')) out.push(`meerkat-base: ${cfg.meerkatBaseCmd}`);
  out.push(`load ${LOAD}: ${load.title}; proxies: 1 process / 1 nginx worker, ${cfg.pool} upstream keep-alive connections`);
  out.push('');
  out.push(`== median over ${cfg.rounds} round(s) ==`);
  // cpu_us/req: the proxy's CPU (its process group, all threads) per answered request, steadier than req/s here.
  out.push(table(['target', 'req/s', 'p50_ms', 'p90_ms', 'p99_ms', 'proxy_cpu%', 'cpu_us/req', 'errors', 'disturbed'],
    targets.map((t) => [t, fmt(med[t].rps, 0), fmt(med[t].p50, 3), fmt(med[t].p90, 3), fmt(med[t].p99, 3), fmt(med[t].proxyCpu, 0), fmt(med[t].cpuUsPerReq, 1), med[t].errors, `${med[t].noisy}/${cfg.rounds}`])));
  const refs = ['nginx', 'bare-uws'].filter((r) => targets.includes(r));
  if (refs.length) {
    out.push('');
    out.push('== ratios of the medians (req/s: higher is better; latency: lower is better) ==');
    const hdr = ['target'];
    for (const ref of refs) hdr.push(`rps/${ref}`, `p50/${ref}`, `p99/${ref}`, `cpu/${ref}`);
    out.push(table(hdr, targets.map((t) => [t, ...refs.flatMap((ref) => [fmt(med[t].rps / med[ref].rps), fmt(med[t].p50 / med[ref].p50), fmt(med[t].p99 / med[ref].p99), fmt(med[t].cpuUsPerReq / med[ref].cpuUsPerReq)])])));
  }
  out.push(...sideBySide(pairs, cfg.pairBase, [], cfg).lines);
  out.push('');
  out.push('== per run: cpu in % of one core over the steady part of the run (pcore/lcore = busy share of the proxy / load core;');
  out.push('   proxy/upstream/wrk = those processes; other = processes this script did not start; +-10% accounting noise) ==');
  out.push(perRunTable(runs));
  out.push('');
  out.push(...warnings(runs, cfg));
  out.push(`elapsed ${Math.round((Date.now() - T0) / 1000)}s`);
  console.log(out.join('\n'));

  const json = { date: new Date().toISOString(), host: { ncpu: NCPU, cpuModel, kernel: os.release() }, config: { ...cfg, meerkatHeaders: cfg.meerkatHeaders.length ? '(set)' : '', targets }, medians: med, runs, pairs };
  fs.writeFileSync(path.join(TMP, 'results.json'), JSON.stringify(json, null, 2));
  if (cfg.outJson) { fs.writeFileSync(cfg.outJson, JSON.stringify(json, null, 2)); log(`results written to ${cfg.outJson}`); }
}

finish(main);
