#!/usr/bin/env node
// run.mjs - data-plane proxy benchmark, run by hand (never part of the test suite). See bench/proxy/README.md.
//
// Starts, all on 127.0.0.1 with free ports:
//   upstream   nginx "return 200" + small JSON (upstream.conf.template), 1 worker, pinned on LOAD_CPU
//   nginx      nginx reverse proxy (nginx-proxy.conf.template), 1 worker, keep-alive pool to the upstream, PROXY_CPU
//   bare-uws   bare-uws-proxy.mjs (uWS + undici Pool), PROXY_CPU
//   meerkat    the gateway: `sh -c "$MEERKAT_CMD"` [default: start-meerkat.mjs, which runs dist/src/cli.js with a
//              protected route], PROXY_CPU (gets BENCH_UPSTREAM / BENCH_PORT); its `BENCH_HEADER Name: value` stdout
//              lines are added to the request headers (the bearer token). In TARGETS by default when dist/ is built.
//   direct     only when listed in TARGETS: wrk straight at the upstream (ceiling of this box, no proxy)
// and drives each target with `wrk -t1 -cN -dS --latency` (pinned on LOAD_CPU, with the upstream), targets
// alternating within each round. Prints medians over rounds, ratios vs nginx and vs bare-uws, and every run.
// Everything started is in its own process group and is stopped by that id on exit, Ctrl-C, error or watchdog.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const T0 = Date.now();
const log = (msg) => process.stderr.write(`[${String(Math.round((Date.now() - T0) / 1000)).padStart(4)}s] ${msg}\n`);
class Fatal extends Error {}
let started = false; // before any process is started, errors just print and exit
const die = (msg) => {
  if (!started) { log(`ERROR: ${msg}`); process.exit(2); }
  throw new Fatal(msg);
};

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  const readme = fs.readFileSync(path.join(HERE, 'README.md'), 'utf8');
  const knobs = readme.match(/## Knobs[\s\S]*?(?=\n## )/);
  console.log(knobs ? knobs[0] : 'see bench/proxy/README.md');
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------- config
const env = process.env;
const num = (name, def, min = 0) => {
  const v = env[name];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) die(`${name}=${v}: expected a number >= ${min}`);
  return n;
};
const NCPU = os.cpus().length;
const cfg = {
  rounds: num('ROUNDS', 3, 1),
  duration: num('DURATION', 10, 1),
  warmup: num('WARMUP', 3),
  warmupNode: num('WARMUP_NODE', 5),
  conns: num('CONNS', 64, 1),
  threads: num('THREADS', 1, 1),
  pool: num('POOL', 64, 1),
  cooldown: num('COOLDOWN', 1),
  pin: env.PIN !== '0',
  proxyCpu: num('PROXY_CPU', 0),
  loadCpu: num('LOAD_CPU', 1),
  waitIdle: num('WAIT_IDLE', 15),
  retries: num('RETRIES', 2),
  noisyPct: num('NOISY_PCT', 10),
  keepTmp: env.KEEP_TMP === '1',
  outJson: env.OUT_JSON || '',
  nginxBin: env.NGINX_BIN || ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find((p) => fs.existsSync(p)) || 'nginx',
  wrkBin: env.WRK_BIN || 'wrk',
  meerkatCmd: env.MEERKAT_CMD || '',
  meerkatCmdDefault: false, // true when meerkatCmd is the built-in start-meerkat.mjs
  meerkatUrl: env.MEERKAT_URL || 'http://127.0.0.1:{BENCH_PORT}/bench/',
  meerkatHeaders: (env.MEERKAT_HEADERS || '').split(/\r?\n|\\n/).map((s) => s.trim()).filter(Boolean),
  meerkatReady: num('MEERKAT_READY_TIMEOUT', 30, 1),
};
if (cfg.conns < cfg.threads) die('CONNS must be >= THREADS');
for (const h of cfg.meerkatHeaders) if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/.test(h)) die(`MEERKAT_HEADERS: "${h}" is not "Name: value"`);
const ALL = ['direct', 'nginx', 'bare-uws', 'meerkat'];
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
if (cfg.meerkatCmd) assertLoopback(cfg.meerkatUrl.replaceAll('{BENCH_PORT}', '1').replaceAll('${BENCH_PORT}', '1'), 'MEERKAT_URL');
if (cfg.pin && NCPU < 2) { log(`only ${NCPU} CPU: pinning disabled`); cfg.pin = false; }
if (cfg.pin && (cfg.proxyCpu >= NCPU || cfg.loadCpu >= NCPU || cfg.proxyCpu === cfg.loadCpu)) die(`PROXY_CPU/LOAD_CPU must be two different CPUs < ${NCPU}`);
const warmOf = (t) => (t === 'bare-uws' || t === 'meerkat' ? cfg.warmupNode : cfg.warmup);
const runSlot = cfg.duration + cfg.cooldown + 3;
const maxSeconds = num('MAX_SECONDS', Math.ceil(60 + cfg.waitIdle + (targets.includes('meerkat') ? cfg.meerkatReady : 0)
  + targets.reduce((s, t) => s + warmOf(t) + cfg.cooldown + 3, 0) + (cfg.rounds * targets.length + cfg.retries) * runSlot), 10);

// ---------------------------------------------------------------------------------------------- processes
started = true;
const TMP = fs.mkdtempSync(path.join(env.BENCH_TMPDIR || os.tmpdir(), 'meerkat-proxy-bench-'));
fs.chmodSync(TMP, 0o711); // nginx workers (user nobody) must traverse into their temp dirs
for (const d of ['logs', 'tmp', 'conf', 'wrk']) fs.mkdirSync(path.join(TMP, d));
const procs = []; // { name, pid, child, exited }: each one leads its own process group (detached => setsid)

function start(name, cmd, args, { cpu = null, extraEnv = {}, cwd = REPO } = {}) {
  const argv = cfg.pin && cpu !== null ? ['taskset', '-c', String(cpu), cmd, ...args] : [cmd, ...args];
  const logFile = path.join(TMP, 'logs', `${name}.log`);
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', fd, fd], cwd, env: { ...env, ...extraEnv } });
  fs.closeSync(fd);
  const p = { name, pid: child.pid, child, exited: false, code: null, logFile };
  if (!child.pid) die(`cannot start ${name}: ${argv.join(' ')}`);
  child.on('exit', (code, sig) => { p.exited = true; p.code = code ?? sig; });
  child.on('error', (e) => { p.exited = true; p.code = e.message; });
  procs.push(p);
  return p;
}
const groupAlive = (pgid) => { try { process.kill(-pgid, 0); return true; } catch { return false; } };
async function stopGroup(p, graceMs = 3000) {
  if (!groupAlive(p.pid)) return;
  try { process.kill(-p.pid, 'SIGTERM'); } catch {}
  for (let t = 0; t < graceMs && groupAlive(p.pid); t += 50) await sleep(50);
  if (groupAlive(p.pid)) { try { process.kill(-p.pid, 'SIGKILL'); } catch {} }
  for (let t = 0; t < 2000 && groupAlive(p.pid); t += 50) await sleep(50);
}
let cleaning = null;
let failed = false;
function cleanup() {
  cleaning ??= (async () => {
    for (const p of [...procs].reverse()) await stopGroup(p);
    const left = procs.filter((p) => groupAlive(p.pid));
    if (left.length) log(`WARNING: still running: ${left.map((p) => `${p.name} (pgid ${p.pid})`).join(', ')}`);
    if (cfg.keepTmp || failed) log(`temp files kept in ${TMP}`);
    else fs.rmSync(TMP, { recursive: true, force: true });
  })();
  return cleaning;
}
process.on('exit', () => { for (const p of procs) if (groupAlive(p.pid)) { try { process.kill(-p.pid, 'SIGKILL'); } catch {} } });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { log(`${sig}: stopping`); cleanup().finally(() => process.exit(130)); });
}
const watchdog = setTimeout(() => {
  log(`watchdog: MAX_SECONDS=${maxSeconds} exceeded, stopping`);
  failed = true;
  cleanup().finally(() => process.exit(124));
}, maxSeconds * 1000);
watchdog.unref();

// ---------------------------------------------------------------------------------------------- helpers
async function freePorts(n) {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(s));
  })));
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}
function render(tpl, vars) {
  const text = fs.readFileSync(path.join(HERE, tpl), 'utf8').replace(/\{\{(\w+)\}\}/g, (m, k) => {
    if (!(k in vars)) die(`${tpl}: unknown placeholder ${m}`);
    return String(vars[k]);
  });
  const out = path.join(TMP, 'conf', tpl.replace(/\.template$/, ''));
  fs.writeFileSync(out, text);
  return out;
}
const tail = (file, n = 15) => { try { return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n'); } catch { return ''; } };
function assertLoopback(url, what) { // hoisted: also used while reading the config
  let u;
  try { u = new URL(url); } catch { die(`${what}: not a URL: ${url}`); }
  if (u.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(u.hostname)) die(`${what}: only http://127.0.0.1 is allowed (got ${url})`);
  return u;
}
// GET url until it answers 200 (or the process dies / time runs out); returns { status, body }.
// headers: an object, or a function returning one, called before every attempt (headers a command prints late).
async function waitHttp(name, proc, url, { timeoutS = 10, headers = {} } = {}) {
  const until = Date.now() + timeoutS * 1000;
  let last = 'no answer';
  while (Date.now() < until) {
    if (proc && proc.exited) die(`${name} exited (${proc.code}) before it answered. Log:\n${tail(proc.logFile)}`);
    const h = typeof headers === 'function' ? headers() : headers;
    if (h === null) { await sleep(100); continue; } // not ready to ask yet
    try {
      const r = await fetch(url, { headers: h, signal: AbortSignal.timeout(2000) });
      const body = await r.text();
      if (r.status === 200) return { status: r.status, body };
      last = `HTTP ${r.status}: ${body.slice(0, 200)}`;
    } catch (e) { last = e.cause?.code || e.message; }
    await sleep(100);
  }
  die(`${name} not ready at ${url} after ${timeoutS}s (last: ${last})${proc ? `. Log:\n${tail(proc.logFile)}` : ''}`);
}
async function waitLine(proc, re, timeoutS = 10) {
  const until = Date.now() + timeoutS * 1000;
  while (Date.now() < until) {
    const m = (fs.existsSync(proc.logFile) ? fs.readFileSync(proc.logFile, 'utf8') : '').match(re);
    if (m) return m;
    if (proc.exited) break;
    await sleep(50);
  }
  die(`${proc.name} did not start (${proc.exited ? `exited ${proc.code}` : 'timeout'}). Log:\n${tail(proc.logFile)}`);
}
// `BENCH_HEADER Name: value` lines the meerkat command printed so far (its stdout is in its log file).
const HEADER_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/;
function benchHeaders(proc) {
  const text = fs.existsSync(proc.logFile) ? fs.readFileSync(proc.logFile, 'utf8') : '';
  const out = [...text.matchAll(/^BENCH_HEADER (.*)$/gm)].map((m) => m[1].trim()).filter(Boolean);
  for (const h of out) if (!HEADER_RE.test(h)) die(`${proc.name}: "BENCH_HEADER ${h}" is not "BENCH_HEADER Name: value"`);
  return out;
}
// Merged header lines: a later line replaces an earlier one of the same name (case-insensitive).
const headerName = (h) => h.slice(0, h.indexOf(':')).trim().toLowerCase();
function mergeHeaders(...lists) {
  const by = new Map();
  for (const h of lists.flat()) by.set(headerName(h), h);
  return [...by.values()];
}
const headerObject = (lines) => Object.fromEntries(lines.map((h) => [h.slice(0, h.indexOf(':')).trim(), h.slice(h.indexOf(':') + 1).trim()]));
// version(cmd, args, re): first match of re in the command's stdout+stderr; null if the command cannot run.
const version = (cmd, args, re) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 5000 });
  return r.error ? null : (`${r.stdout}${r.stderr}`.match(re)?.[1] ?? '?');
};
const pkgVersion = (name) => { try { return JSON.parse(fs.readFileSync(path.join(REPO, 'node_modules', name, 'package.json'), 'utf8')).version; } catch { return '?'; } };

// ------------------------------------------------------------------ CPU accounting (/proc, Linux only)
// cores(): per core { busy: user+nice+system+irq+softirq, steal, total } in jiffies.
function cores() {
  const out = [];
  for (const line of fs.readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = line.match(/^cpu(\d+)\s+(.*)$/);
    if (!m) continue;
    const v = m[2].split(/\s+/).map(Number); // user nice system idle iowait irq softirq steal
    out[+m[1]] = { busy: v[0] + v[1] + v[2] + v[5] + v[6], steal: v[7], total: v.slice(0, 8).reduce((a, b) => a + b, 0) };
  }
  return out;
}
// CPU jiffies (utime+stime, all threads) of every process, by process group; only groups in `pgids` kept.
function groupTicks(pgids) {
  const by = new Map(pgids.map((g) => [g, 0]));
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let s;
    try { s = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); } catch { continue; }
    const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // f[0]=state f[2]=pgrp f[11]=utime f[12]=stime
    const g = Number(f[2]);
    if (by.has(g)) by.set(g, by.get(g) + Number(f[11]) + Number(f[12]));
  }
  return by;
}
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
const snap = (pgids) => ({ t: process.hrtime.bigint(), cores: cores(), groups: groupTicks(pgids) });
// % of one core over the window between two snaps.
function cpuDiff(a, b, { proxy, upstream, wrk }) {
  const d = b.cores.map((c, i) => ({ busy: c.busy - a.cores[i].busy, steal: c.steal - a.cores[i].steal, total: c.total - a.cores[i].total }));
  const span = Math.max(1, (Number(b.t - a.t) / 1e9) * CLK_TCK); // jiffies of one core over the window (wall clock)
  const g = (pg) => (pg == null ? NaN : (b.groups.get(pg) ?? 0) - (a.groups.get(pg) ?? 0));
  const ours = [...b.groups.keys()].reduce((s, pg) => s + g(pg), 0);
  const pct = (x) => (Number.isFinite(x) ? Math.round((100 * x) / span) : NaN);
  const core = (i) => (cfg.pin ? Math.round((100 * d[i].busy) / Math.max(1, d[i].total)) : NaN);
  return {
    proxyCore: core(cfg.proxyCpu), loadCore: core(cfg.loadCpu),
    proxy: pct(g(proxy)), upstream: pct(g(upstream)), wrk: pct(g(wrk)),
    other: pct(Math.max(0, d.reduce((s, c) => s + c.busy, 0) - ours)), // CPU of processes this script did not start
    steal: pct(d.reduce((s, c) => s + c.steal, 0)),
  };
}

// ---------------------------------------------------------------------------------------------- wrk
const toMs = (s) => {
  const m = String(s).match(/^([\d.]+)(us|ms|s|m)$/);
  return m ? Number(m[1]) * { us: 1e-3, ms: 1, s: 1e3, m: 6e4 }[m[2]] : NaN;
};
function parseWrk(text) {
  const lat = (p) => toMs(text.match(new RegExp(`^\\s*${p}%\\s+(\\S+)`, 'm'))?.[1]);
  const se = text.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  return {
    rps: Number(text.match(/^Requests\/sec:\s+([\d.]+)/m)?.[1] ?? NaN),
    requests: Number(text.match(/^\s*(\d+) requests in/m)?.[1] ?? NaN),
    p50: lat(50), p75: lat(75), p90: lat(90), p99: lat(99),
    sockErrors: se ? se.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    non2xx: Number(text.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0),
  };
}
// One wrk run against target t; samples CPU from t+1s to t+(d-1)s.
async function runWrk(t, d, tag) {
  const T = TGT[t];
  const args = [`-t${cfg.threads}`, `-c${cfg.conns}`, `-d${d}s`, '--latency', ...T.headers.flatMap((h) => ['-H', h]), T.url];
  const w = start(`wrk-${tag}-${t}`, cfg.wrkBin, args, { cpu: cfg.loadCpu });
  const killer = setTimeout(() => { try { process.kill(-w.pid, 'SIGKILL'); } catch {} }, (d + 15) * 1000);
  let cpu = null;
  if (d >= 3) {
    const pg = [...procs.filter((p) => !p.exited || p === w).map((p) => p.pid)];
    await sleep(1000);
    const a = snap(pg);
    await sleep((d - 2) * 1000);
    if (!w.exited) cpu = cpuDiff(a, snap(pg), { proxy: T.pgid, upstream: upstreamProc.pid, wrk: w.pid });
  }
  while (!w.exited) await sleep(20);
  clearTimeout(killer);
  procs.splice(procs.indexOf(w), 1);
  const text = fs.readFileSync(w.logFile, 'utf8');
  fs.renameSync(w.logFile, path.join(TMP, 'wrk', path.basename(w.logFile)));
  if (w.code !== 0) die(`wrk failed for ${t} (exit ${w.code}):\n${text.slice(-1500)}`);
  const r = parseWrk(text);
  if (!Number.isFinite(r.rps)) die(`cannot parse wrk output for ${t}:\n${text}`);
  return { ...r, cpu };
}

// ---------------------------------------------------------------------------------------------- main
const TGT = {}; // name -> { url, headers, pgid }
let upstreamProc;

async function main() {
  // preflight
  if (!version(cfg.nginxBin, ['-v'], /nginx\/(\S+)/)) die(`nginx not found (${cfg.nginxBin}): apt-get install -y nginx, or set NGINX_BIN`);
  const wrkV = version(cfg.wrkBin, ['-v'], /wrk (\S+)/);
  if (!wrkV) die(`wrk not found (${cfg.wrkBin}): apt-get install -y wrk, or set WRK_BIN`);
  if (cfg.pin && !version('taskset', ['-V'], /(\d[\d.]*)/)) die('taskset not found (util-linux); or run with PIN=0');

  if (targets.includes('meerkat') && cfg.meerkatCmdDefault) {
    // A stale build would benchmark old code: say so (the run goes on).
    const newest = (dir) => {
      let m = 0;
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        m = Math.max(m, e.isDirectory() ? newest(p) : e.name.endsWith('.ts') ? fs.statSync(p).mtimeMs : 0);
      }
      return m;
    };
    try {
      if (newest(path.join(REPO, 'src')) > fs.statSync(GATEWAY_CLI).mtimeMs) log('WARNING: some src/ file is newer than dist/: meerkat runs the last build (npm run build to refresh it)');
    } catch {}
  }
  const [upPort, ngxPort, meerkatPort] = await freePorts(3);
  const upstreamUrl = `http://127.0.0.1:${upPort}/`;

  // upstream
  const upConf = render('upstream.conf.template', { PREFIX: TMP, UP_PORT: upPort });
  upstreamProc = start('upstream', cfg.nginxBin, ['-p', `${TMP}/`, '-e', `${TMP}/logs/upstream-error.log`, '-c', upConf], { cpu: cfg.loadCpu });
  const expected = (await waitHttp('upstream', upstreamProc, `${upstreamUrl}bench/`)).body;
  if (targets.includes('direct')) TGT.direct = { url: `${upstreamUrl}bench/`, headers: [], pgid: null };

  // nginx reverse proxy
  if (targets.includes('nginx')) {
    const conf = render('nginx-proxy.conf.template', { PREFIX: TMP, UP_PORT: upPort, PROXY_PORT: ngxPort, POOL: cfg.pool });
    const p = start('nginx-proxy', cfg.nginxBin, ['-p', `${TMP}/`, '-e', `${TMP}/logs/nginx-proxy-error.log`, '-c', conf], { cpu: cfg.proxyCpu });
    TGT.nginx = { url: `http://127.0.0.1:${ngxPort}/bench/`, headers: [], pgid: p.pid, proc: p };
  }
  // bare uWS + undici peer (listens on port 0, prints its port)
  if (targets.includes('bare-uws')) {
    const p = start('bare-uws', process.execPath, [path.join(HERE, 'bare-uws-proxy.mjs'), '0', upstreamUrl.slice(0, -1), String(cfg.pool)], { cpu: cfg.proxyCpu });
    const port = (await waitLine(p, /listening on 127\.0\.0\.1:(\d+)/))[1];
    TGT['bare-uws'] = { url: `http://127.0.0.1:${port}/bench/`, headers: [], pgid: p.pid, proc: p };
  }
  // Meerkat (optional hook)
  if (targets.includes('meerkat')) {
    const url = cfg.meerkatUrl.replaceAll('{BENCH_PORT}', String(meerkatPort)).replaceAll('${BENCH_PORT}', String(meerkatPort));
    assertLoopback(url, 'MEERKAT_URL');
    const p = start('meerkat', '/bin/sh', ['-c', cfg.meerkatCmd], {
      cpu: cfg.proxyCpu,
      extraEnv: { BENCH_UPSTREAM: upstreamUrl, BENCH_PORT: String(meerkatPort), BENCH_HOST: '127.0.0.1', BENCH_POOL: String(cfg.pool) },
    });
    TGT.meerkat = { url, headers: cfg.meerkatHeaders, pgid: p.pid, proc: p };
  }
  for (const t of targets) {
    if (t === 'direct') continue;
    const T = TGT[t];
    // meerkat: MEERKAT_HEADERS plus the command's BENCH_HEADER lines (which win on the same name), re-read on every
    // attempt; the built-in start-meerkat.mjs always prints one (the token), so wait for it before asking.
    const hdrs = t !== 'meerkat' ? headerObject(T.headers) : () => {
      const printed = benchHeaders(T.proc);
      if (cfg.meerkatCmdDefault && !printed.length) return null;
      return headerObject(mergeHeaders(T.headers, printed));
    };
    const r = await waitHttp(t, T.proc, T.url, { timeoutS: t === 'meerkat' ? cfg.meerkatReady : 10, headers: hdrs });
    if (t === 'meerkat') {
      const printed = benchHeaders(T.proc);
      T.headers = mergeHeaders(T.headers, printed);
      if (printed.length) log(`meerkat: headers from the command: ${printed.map(headerName).join(', ')} (values not shown)`);
    }
    if (r.body !== expected) {
      if (t === 'meerkat') log(`WARNING: meerkat answered 200 with a body different from the upstream's: ${JSON.stringify(r.body.slice(0, 200))}`);
      else die(`${t}: body differs from the upstream's: ${JSON.stringify(r.body.slice(0, 200))}`);
    }
  }
  log(`upstream ${upstreamUrl} | ${targets.map((t) => `${t} ${TGT[t].url}`).join(' | ')}`);
  log(cfg.pin ? `pinning: proxies on cpu ${cfg.proxyCpu}; upstream + wrk on cpu ${cfg.loadCpu}` : 'pinning: off');

  // wait (bounded) for the box to be quiet: two 1 s samples in a row with < NOISY_PCT of other CPU
  if (cfg.waitIdle > 0) {
    const until = Date.now() + cfg.waitIdle * 1000;
    let quiet = 0, other = NaN;
    while (quiet < 2) {
      const pg = procs.map((p) => p.pid);
      const a = snap(pg);
      await sleep(1000);
      const c = cpuDiff(a, snap(pg), {});
      other = c.other + c.steal;
      quiet = other < cfg.noisyPct ? quiet + 1 : 0;
      if (quiet < 2 && Date.now() > until) { log(`WARNING: box still busy after WAIT_IDLE=${cfg.waitIdle}s (${other}% of a core used by others); measuring anyway`); break; }
    }
    if (quiet >= 2) log(`box idle (${other}% of a core used by others)`);
  }

  // warm-up (not recorded)
  for (const t of targets) {
    if (!warmOf(t)) continue;
    log(`warm-up ${t}: ${warmOf(t)}s`);
    await runWrk(t, warmOf(t), 'warm');
    await sleep(cfg.cooldown * 1000);
  }

  // rounds: targets alternate; the order rotates each round so no target always runs first or right after another
  const runs = [];
  let retries = cfg.retries;
  log(`${cfg.rounds} round(s) x ${targets.length} target(s): wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s --latency`);
  for (let round = 1; round <= cfg.rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round - 1) % targets.length]);
    for (const t of order) {
      let r, attempt = 0;
      for (;;) {
        r = await runWrk(t, cfg.duration, `r${round}`);
        attempt++;
        r.noisy = !!r.cpu && (r.cpu.other >= cfg.noisyPct || r.cpu.steal >= cfg.noisyPct);
        log(`round ${round} ${t.padEnd(8)} ${fmt(r.rps, 0).padStart(8)} req/s  p50 ${fmt(r.p50, 3)} ms  p99 ${fmt(r.p99, 3)} ms`
          + `  errors ${r.sockErrors}/${r.non2xx}  cpu% proxy ${fmt(r.cpu?.proxy ?? NaN, 0)} up ${fmt(r.cpu?.upstream ?? NaN, 0)}`
          + ` wrk ${fmt(r.cpu?.wrk ?? NaN, 0)} other ${fmt(r.cpu?.other ?? NaN, 0)} steal ${fmt(r.cpu?.steal ?? NaN, 0)}${r.noisy ? '  (disturbed)' : ''}`);
        await sleep(cfg.cooldown * 1000);
        const timeLeft = maxSeconds - (Date.now() - T0) / 1000 - (cfg.rounds * targets.length - runs.length) * runSlot;
        if (!r.noisy || retries <= 0 || timeLeft < runSlot) break;
        retries--;
        log(`  repeating the disturbed run (retries left: ${retries})`);
      }
      runs.push({ round, target: t, attempts: attempt, ...r });
    }
  }
  report(runs, { wrkV, expected });
}

// ---------------------------------------------------------------------------------------------- report
function fmt(x, d = 2) { return Number.isFinite(x) ? x.toFixed(d) : 'NA'; }
const median = (xs) => {
  const a = xs.filter(Number.isFinite).sort((x, y) => x - y);
  if (!a.length) return NaN;
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
};
function table(header, rows) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}
// What the built-in command runs: dist/ build time and the checkout's commit (read-only git calls).
function meerkatBuild() {
  const git = (...a) => spawnSync('git', ['-C', REPO, ...a], { encoding: 'utf8', timeout: 5000 });
  const sha = git('rev-parse', '--short', 'HEAD').stdout?.trim();
  const dirty = git('status', '--porcelain', '--', 'src').stdout?.trim();
  let builtAt = '?';
  try { builtAt = fs.statSync(GATEWAY_CLI).mtime.toISOString(); } catch {}
  return `dist/ built ${builtAt}${sha ? `, git ${sha}${dirty ? ' + uncommitted changes in src/' : ''}` : ''}`;
}
function report(runs, { wrkV, expected }) {
  const med = {};
  for (const t of targets) {
    const rs = runs.filter((r) => r.target === t);
    med[t] = Object.fromEntries(['rps', 'p50', 'p90', 'p99'].map((k) => [k, median(rs.map((r) => r[k]))]));
    med[t].proxyCpu = median(rs.map((r) => r.cpu?.proxy ?? NaN));
    med[t].errors = rs.reduce((s, r) => s + r.sockErrors + r.non2xx, 0);
    med[t].noisy = rs.filter((r) => r.noisy).length;
  }
  const cpuModel = os.cpus()[0]?.model ?? '?';
  const out = [];
  out.push(`proxy bench ${new Date().toISOString()}  ${NCPU} CPU (${cpuModel}), kernel ${os.release()}`);
  out.push(`versions: nginx ${version(cfg.nginxBin, ['-v'], /nginx\/(\S+)/)}, wrk ${wrkV}, node ${process.version}, undici ${pkgVersion('undici')}, uws-pack ${pkgVersion('uWebSockets.js')}`);
  out.push(`load: wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s --latency, ${cfg.rounds} round(s), warm-up ${cfg.warmup}s (node targets ${cfg.warmupNode}s); `
    + (cfg.pin ? `proxy on cpu ${cfg.proxyCpu}, upstream + wrk on cpu ${cfg.loadCpu}` : 'no pinning'));
  if (targets.includes('meerkat')) out.push(`meerkat: ${cfg.meerkatCmd}${cfg.meerkatCmdDefault ? ` (${meerkatBuild()})` : ''}`);
  out.push(`upstream: nginx return 200, ${Buffer.byteLength(expected)}-byte JSON; proxies: 1 process / 1 nginx worker, ${cfg.pool} upstream keep-alive connections`);
  out.push('');
  out.push(`== median over ${cfg.rounds} round(s) ==`);
  out.push(table(['target', 'req/s', 'p50_ms', 'p90_ms', 'p99_ms', 'proxy_cpu%', 'errors', 'disturbed'],
    targets.map((t) => [t, fmt(med[t].rps, 0), fmt(med[t].p50, 3), fmt(med[t].p90, 3), fmt(med[t].p99, 3), fmt(med[t].proxyCpu, 0), med[t].errors, `${med[t].noisy}/${cfg.rounds}`])));
  const refs = ['nginx', 'bare-uws'].filter((r) => targets.includes(r));
  if (refs.length) {
    out.push('');
    out.push('== ratios of the medians (req/s: higher is better; latency: lower is better) ==');
    const hdr = ['target'];
    for (const ref of refs) hdr.push(`rps/${ref}`, `p50/${ref}`, `p99/${ref}`);
    out.push(table(hdr, targets.map((t) => [t, ...refs.flatMap((ref) => [fmt(med[t].rps / med[ref].rps), fmt(med[t].p50 / med[ref].p50), fmt(med[t].p99 / med[ref].p99)])])));
  }
  out.push('');
  out.push('== per run: cpu in % of one core over the steady part of the run (pcore/lcore = busy share of the proxy / load core;');
  out.push('   proxy/upstream/wrk = those processes; other = processes this script did not start; +-10% accounting noise) ==');
  out.push(table(['round', 'target', 'req/s', 'p50_ms', 'p99_ms', 'sock_err', 'non2xx', 'pcore%', 'lcore%', 'proxy%', 'upstream%', 'wrk%', 'other%', 'steal%', 'note'],
    runs.map((r) => [r.round, r.target, fmt(r.rps, 0), fmt(r.p50, 3), fmt(r.p99, 3), r.sockErrors, r.non2xx,
      ...['proxyCore', 'loadCore', 'proxy', 'upstream', 'wrk', 'other', 'steal'].map((k) => fmt(r.cpu?.[k] ?? NaN, 0)),
      [r.noisy ? 'DISTURBED' : '', r.attempts > 1 ? `attempt ${r.attempts}` : ''].filter(Boolean).join(', ')])));
  const noisy = runs.filter((r) => r.noisy).length;
  const errs = runs.reduce((s, r) => s + r.sockErrors + r.non2xx, 0);
  out.push('');
  out.push(noisy ? `WARNING: ${noisy} run(s) saw other processes or steal >= ${cfg.noisyPct}% of a core: treat those numbers with care`
    : `no run saw other processes or steal >= ${cfg.noisyPct}% of a core`);
  if (errs) out.push(`WARNING: ${errs} socket error(s) / non-2xx response(s) in total (see the per-run table)`);
  out.push(`elapsed ${Math.round((Date.now() - T0) / 1000)}s`);
  console.log(out.join('\n'));

  const json = { date: new Date().toISOString(), host: { ncpu: NCPU, cpuModel, kernel: os.release() }, config: { ...cfg, meerkatHeaders: cfg.meerkatHeaders.length ? '(set)' : '', targets }, medians: med, runs };
  fs.writeFileSync(path.join(TMP, 'results.json'), JSON.stringify(json, null, 2));
  if (cfg.outJson) { fs.writeFileSync(cfg.outJson, JSON.stringify(json, null, 2)); log(`results written to ${cfg.outJson}`); }
}

main().then(
  async () => { await cleanup(); process.exit(0); },
  async (e) => {
    failed = true;
    log(e instanceof Fatal ? `ERROR: ${e.message}` : `ERROR: ${e.stack || e}`);
    await cleanup();
    process.exit(1);
  },
);
