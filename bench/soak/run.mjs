#!/usr/bin/env node
// run.mjs - memory soak of the data plane with every observer on: does the gateway's memory stay bounded under
// long, varied traffic? Run by hand (never part of the test suite). See bench/soak/README.md.
//
// Starts, all on 127.0.0.1 with free ports: the upstream nginx of the proxy bench (pinned on LOAD_CPU), the
// stand-in log agent of bench/observe (agent.mjs, reading the gateway's standard output from a FIFO, on LOAD_CPU)
// and one gateway (bench/proxy/start-meerkat.mjs: SQLite, the access log on, metrics on, pinned on PROXY_CPU).
// Adds through the control plane the routes `jwt` (a signed identity, endpoint rules) and `open` (public), USERS
// accounts holding `staff` with a personal token each, and `outsider` (no role) with one. Then drives wrk with
// soak.lua (a different request at every call: paths with identifiers, query strings naming people, several
// tokens, unknown tokens, 404s, POST with bodies; the HEADs come from this script, wrk cannot read their answers)
// for DURATION seconds after the idle gateway's memory settled, and every SAMPLE seconds reads the
// gateway's memory from /proc/<pid>/status and /proc/<pid>/smaps_rollup and the answers so far from the count
// files the script writes. Prints the table over time and the verdict: RSS growth per million requests after
// WARMUP, and the growth of the last half of the run against the first half.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { checkPinning, commonConfig, helpFromReadme, NCPU, num } from '../lib/config.mjs';
import { benchHeaders, headerObject, printed } from '../lib/headers.mjs';
import { cpuSeconds } from '../lib/load.mjs';
import { begin, die, finish, forget, groupAlive, log, pkgVersion, start, TMP, version, waitHttp } from '../lib/procs.mjs';
import { fmt, gatewayBuild, table } from '../lib/report.mjs';
import { openBench } from '../lib/upstream.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const GATEWAY_CLI = path.join(REPO, 'dist', 'src', 'cli.js');
helpFromReadme(path.join(HERE, 'README.md'));

// ---------------------------------------------------------------------------------------------- config
const env = process.env;
const common = commonConfig({ duration: 120, warmup: 30, conns: 32 });
const cfg = {
  ...common,
  sample: num('SAMPLE', 5, 1),
  settle: num('SETTLE', 15, 0),
  users: num('USERS', 8, 1),
  flatMb: num('FLAT_MB', 8, 0),
  readyTimeout: num('MEERKAT_READY_TIMEOUT', 150, 1),
  idleMin: num('IDLE_MIN', 40, 0),
  idleMax: num('IDLE_MAX', 120, 0),
  headRate: num('HEAD_RATE', 20, 0),
  traffic: (env.TRAFFIC || 'varied').trim(),
  clockRate: num('CLOCK_RATE', 0, 0),
  clockStep: num('CLOCK_STEP', 5, 1),
  snapshots: (env.HEAP_SNAPSHOTS || '').split(',').map((s) => s.trim()).filter(Boolean).map(Number),
};
if (cfg.clockRate > 0 && cfg.clockRate < 1) die(`CLOCK_RATE=${cfg.clockRate}: 0 (the gateway on the wall clock) or at least 1 (gateway seconds a second)`);
if (!['varied', 'same'].includes(cfg.traffic)) die(`TRAFFIC=${cfg.traffic}: expected varied or same`);
if (cfg.warmup >= cfg.duration - 2 * cfg.sample) die(`WARMUP=${cfg.warmup} leaves too little of DURATION=${cfg.duration} to judge (at least two samples a half)`);
for (const s of cfg.snapshots) if (!Number.isFinite(s) || s < 0 || s > cfg.duration) die(`HEAP_SNAPSHOTS: "${env.HEAP_SNAPSHOTS}" is not a list of seconds within DURATION`);
if (!fs.existsSync(GATEWAY_CLI)) die(`${path.relative(REPO, GATEWAY_CLI)} is missing: run npm run build first`);
checkPinning(cfg);
// The gateway's own start timeout (start-meerkat.mjs): this kind of machine can take a minute to start one.
const startTimeout = env.MEERKAT_START_TIMEOUT || '120';
const maxSeconds = num('MAX_SECONDS', Math.ceil(90 + cfg.readyTimeout + cfg.idleMax + cfg.duration + cfg.settle + 20 * cfg.snapshots.length + 60), 10);

begin(cfg, { tmpPrefix: 'meerkat-soak-bench-', maxSeconds, cwd: REPO });

// ---------------------------------------------------------------------------------------------- /proc
const kb = (text, key) => Number(text.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
const MB = 1024; // kB in a MB (MiB)
/** The gateway's memory now: RSS and its parts (status), the anonymous memory and PSS (smaps_rollup), threads. */
function memoryOf(pid) {
  let status = '', rollup = '';
  try { status = fs.readFileSync(`/proc/${pid}/status`, 'utf8'); } catch (e) { return { error: e.code || e.message }; }
  try { rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'); } catch {}
  return {
    rss: kb(status, 'VmRSS') / MB, anon: kb(status, 'RssAnon') / MB, file: kb(status, 'RssFile') / MB, shmem: kb(status, 'RssShmem') / MB,
    hwm: kb(status, 'VmHWM') / MB, pss: kb(rollup, 'Pss') / MB, swap: kb(status, 'VmSwap') / MB,
    threads: Number(status.match(/^Threads:\s+(\d+)/m)?.[1] ?? NaN),
  };
}
/** The threads of the gateway, by name (comm), e.g. { node: 1, 'libuv-worker': 4, ... }. */
function threadNames(pid) {
  const out = {};
  try {
    for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
      let n = '?';
      try { n = fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim(); } catch {}
      out[n] = (out[n] ?? 0) + 1;
    }
  } catch {}
  return out;
}
/** The pid of `node dist/src/cli.js start` in the wrapper's process group (start-meerkat.mjs spawns it). */
function gatewayPid(pgid) {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.endsWith(path.join('dist', 'src', 'cli.js'))) && argv.includes('start')) return Number(d);
    } catch {}
  }
  return null;
}

// ---------------------------------------------------------------------------------------------- the gateway's side
let CONTROL = '', SESSION = '';
/** The harness's admin token once made: a session ends with its lifetime, which a moved test clock passes. */
let ADMIN = '';
async function api(method, p, body) {
  const r = await fetch(`${CONTROL}${p}`, {
    method,
    headers: { ...(ADMIN ? { authorization: `Bearer ${ADMIN}` } : { cookie: SESSION, origin: CONTROL }), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await r.text();
  if (r.status >= 300) die(`${method} ${p}: HTTP ${r.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}
/** The routes, accounts and tokens the traffic needs, beside the proxy bench's `bench` route; returns the tokens. */
async function configure(upstreamUrl) {
  const upstream = upstreamUrl.replace(/\/+$/, '');
  ADMIN = (await api('POST', '/api/tokens', { name: 'soak-harness', kind: 'admin', account: 'root' })).token;
  if (!ADMIN) die('POST /api/tokens: no token in the answer');
  await api('PUT', '/api/routes/jwt', {
    upstream, paths: ['/jwt'], stripPrefix: true, rule: { roles: ['staff'] }, identity: 'jwt',
    endpointRules: [{ method: 'GET', path: '/users/{user}/orders/{order}', roles: ['staff'] }, { method: '*', path: '/items/{id}', roles: ['staff'] }],
  });
  await api('PUT', '/api/routes/open', { upstream, paths: ['/open'] });
  const tokens = [];
  for (let i = 1; i <= cfg.users; i++) {
    await api('POST', '/api/accounts', { name: `soak${i}`, password: `soak-password-${i}`, roles: ['staff'] });
    tokens.push((await api('POST', '/api/tokens', { name: `soak${i}`, kind: 'personal', account: `soak${i}` })).token);
  }
  await api('POST', '/api/accounts', { name: 'outsider', password: 'outsider-password-1', roles: [] });
  const outsider = (await api('POST', '/api/tokens', { name: 'outsider', kind: 'personal', account: 'outsider' })).token;
  if (tokens.some((t) => !t) || !outsider) die('POST /api/tokens: no token in an answer');
  return { tokens, outsider };
}
/** What the observers say at the end: deduced endpoints per route, access lines dropped. */
async function observers() {
  const routes = {};
  for (const id of ['bench', 'jwt', 'open']) {
    const r = await api('GET', `/api/metrics/routes/${id}`);
    const eps = r.endpoints ?? [];
    routes[id] = { endpoints: eps.length, deduced: eps.filter((e) => e.deduced).length, other: eps.some((e) => e.template === '(other)') };
  }
  const logs = await api('GET', '/api/settings/logs');
  const metrics = await api('GET', '/api/metrics');
  return { routes, dropped: (logs.droppedRecords?.access ?? 0) + (logs.dropped?.access ?? 0), minute: metrics.minute };
}

// ---------------------------------------------------------------------------------------------- load
/** Answers so far, summed over wrk's threads' count files: [answered, 2xx, 3xx, 4xx, 5xx, 404]. */
function answered(prefix) {
  const sum = [0, 0, 0, 0, 0, 0];
  for (let t = 1; t <= cfg.threads; t++) {
    try {
      const xs = fs.readFileSync(`${prefix}.${t}`, 'utf8').trim().split(/\s+/).map(Number);
      xs.forEach((x, i) => { if (Number.isFinite(x)) sum[i] += x; });
    } catch {}
  }
  return sum;
}
/**
 * The HEAD requests of the varied traffic, sent from here at about `rate` a second (wrk cannot read a HEAD answer):
 * paths of the same kinds as soak.lua's, a valid token, fetch's keep-alive pool. Returns { stop(), counts }.
 */
function headDriver(data, tokens, rate) {
  const counts = { sent: 0, byStatus: {}, errors: 0 };
  let stopped = false;
  const rnd = (n) => Math.floor(Math.random() * n);
  const hex = (n) => Array.from({ length: n }, () => rnd(16).toString(16)).join('');
  const shapes = [
    () => `/bench/users/${rnd(1e7)}/orders/${crypto.randomUUID()}`,
    () => `/bench/items/${hex(24)}?user=alice${rnd(1e5)}&email=alice${rnd(1e5)}%40example.com`,
    () => `/jwt/items/${hex(24)}`,
    () => `/open/catalog/w${rnd(50)}/${rnd(1e5)}`,
    () => `/nowhere-${rnd(1e6)}/x`,
  ];
  const loop = async () => {
    while (!stopped) {
      const t = Date.now();
      try {
        const r = await fetch(`${data}${shapes[rnd(shapes.length)]()}`, { method: 'HEAD', headers: { authorization: `Bearer ${tokens[rnd(tokens.length)]}` }, signal: AbortSignal.timeout(5000) });
        counts.byStatus[r.status] = (counts.byStatus[r.status] ?? 0) + 1;
      } catch { counts.errors++; }
      counts.sent++;
      await sleep(Math.max(0, 1000 / rate - (Date.now() - t)));
    }
  };
  const done = rate > 0 ? loop() : Promise.resolve();
  return { counts, stop: async () => { stopped = true; await done; } };
}
/**
 * With CLOCK_RATE, the gateway runs on its test clock (GATEWAY_CLOCK=manual), moved on by CLOCK_STEP seconds as
 * often as makes CLOCK_RATE gateway seconds a second: what fills by time (the metrics' hour of intervals, the
 * endpoint history's seventy minutes, the endpoint names' hour, the signing keys' rotation, retention) fills in
 * minutes of load instead of hours. `state.moved` counts the gateway seconds moved; `stop()` ends the moves.
 */
function clockDriver(rate, step) {
  const state = { moved: 0, refused: 0, stopped: false };
  const loop = async () => {
    const every = (step / rate) * 1000;
    let due = Date.now();
    while (!state.stopped) {
      try {
        const r = await fetch(`${CONTROL}/__clock/advance`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ by: `PT${step}S` }), signal: AbortSignal.timeout(10_000) });
        await r.arrayBuffer();
        if (r.status === 200) state.moved += step; else state.refused++;
      } catch { state.refused++; }
      due += every;
      await sleep(Math.max(0, due - Date.now()));
    }
  };
  const done = rate > 0 ? loop() : Promise.resolve();
  return { state, stop: async () => { state.stopped = true; await done; } };
}
function agentLines(file) {
  try { return JSON.parse(fs.readFileSync(file, 'utf8')).lines; } catch { return 0; }
}

// ---------------------------------------------------------------------------------------------- main
async function main() {
  const { wrkV, ports, upstreamUrl, upstreamProc } = await openBench(cfg, { repo: REPO, cli: GATEWAY_CLI, targets: 1 });
  const fifo = path.join(TMP, 'stdout.fifo');
  const countFile = path.join(TMP, 'stdout.count.json');
  const mk = spawnSync('mkfifo', [fifo], { encoding: 'utf8' });
  if (mk.status !== 0) die(`mkfifo ${fifo}: ${mk.stderr}`);
  start('agent', process.execPath, [path.join(REPO, 'bench', 'observe', 'agent.mjs'), fifo, countFile], { cpu: cfg.loadCpu });
  const heapDir = path.join(TMP, 'heap');
  const nodeArgs = [env.MEERKAT_NODE_ARGS ?? '', ...(cfg.snapshots.length ? [`--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${heapDir}`] : [])].join(' ').trim();
  if (cfg.snapshots.length) fs.mkdirSync(heapDir);
  const gw = start('meerkat', process.execPath, [path.join(REPO, 'bench', 'proxy', 'start-meerkat.mjs')], {
    cpu: cfg.proxyCpu,
    extraEnv: {
      BENCH_UPSTREAM: upstreamUrl, BENCH_PORT: String(ports[0]), BENCH_HOST: '127.0.0.1', BENCH_STDOUT: fifo,
      BENCH_ACCESS_LOG: 'on', BENCH_GATEWAY_ENV: JSON.stringify({ GATEWAY_METRICS: 'on', ...(cfg.clockRate > 0 ? { GATEWAY_CLOCK: 'manual' } : {}) }),
      MEERKAT_START_TIMEOUT: startTimeout, MEERKAT_NODE_ARGS: nodeArgs,
    },
  });
  const data = `http://127.0.0.1:${ports[0]}`;
  await waitHttp('meerkat', gw, `${data}/bench/`, { timeoutS: cfg.readyTimeout, headers: () => (printed(gw, 'BENCH_SESSION').length ? headerObject(benchHeaders(gw)) : null) });
  CONTROL = printed(gw, 'BENCH_CONTROL')[0];
  SESSION = printed(gw, 'BENCH_SESSION')[0];
  const pid = gatewayPid(gw.pid);
  if (!pid) die('cannot find the gateway\'s process (node dist/src/cli.js start) in the wrapper\'s process group');
  log(`gateway pid ${pid}, data plane ${data}, control plane ${CONTROL}`);

  const { tokens, outsider } = await configure(upstreamUrl);
  await waitHttp('route jwt', gw, `${data}/jwt/users/1/orders/2`, { timeoutS: 30, headers: { authorization: `Bearer ${tokens[0]}` } });
  await waitHttp('route open', gw, `${data}/open/`, { timeoutS: 30 });
  log(`configured: routes bench, jwt, open; ${cfg.users} accounts with a token each, and outsider`);

  const samples = [];
  const counts = path.join(TMP, 'wrk', 'count');
  let t0 = Date.now(), cpu0 = cpuSeconds(gw.pid);
  const sampleNow = (phase) => {
    let m = memoryOf(pid);
    // A read of /proc can fail while the process lives (seen once: a sample lost mid-run); tried again.
    for (let i = 0; m.error && i < 5; i++) {
      log(`WARNING: reading /proc/${pid}/status: ${m.error}; ${groupAlive(gw.pid) ? 'the gateway is alive, trying again' : 'the gateway is gone'}`);
      if (!groupAlive(gw.pid)) break;
      spawnSync('sleep', ['0.2']);
      m = memoryOf(pid);
    }
    if (m.error) die(`cannot read the gateway's memory (/proc/${pid}/status: ${m.error}); the gateway ${gw.exited ? `exited (${gw.code})` : 'still runs'}`);
    const a = answered(counts);
    const s = { t: (Date.now() - t0) / 1000, phase, requests: Math.max(a[0], samples.at(-1)?.requests ?? 0), s2xx: a[1], s4xx: a[3], s5xx: a[4], s404: a[5], lines: agentLines(countFile), cpu: cpuSeconds(gw.pid) - cpu0, ...m };
    samples.push(s);
    return s;
  };
  const say = (s) => log(`t=${fmt(s.t, 0)}s ${s.phase.padEnd(5)} requests ${String(s.requests).padStart(9)}  rss ${fmt(s.rss, 1)} MB  anon ${fmt(s.anon, 1)} MB  hwm ${fmt(s.hwm, 1)} MB  threads ${s.threads}  lines ${s.lines}`);

  // Idle, configured: the reference before any load. Start-up and the accounts' password hashes (scrypt, 32 MiB
  // each, on the task pool, whose threads leave after 30 s idle) leave memory the process gives back over the next
  // half minute; the load starts after IDLE_MIN seconds once RSS stopped falling (two samples in a row within
  // 1 MB), or after IDLE_MAX seconds, so that this release does not hide a growth under load.
  const idleFrom = Date.now();
  say(sampleNow('idle'));
  for (;;) {
    const [a, b] = samples.slice(-2);
    const idleS = (Date.now() - idleFrom) / 1000;
    if ((idleS >= cfg.idleMin && b && Math.abs(b.rss - a.rss) < 1) || idleS >= cfg.idleMax) break;
    await sleep(cfg.sample * 1000);
    say(sampleNow('idle'));
  }
  for (const s of samples) s.t -= (Date.now() - t0) / 1000; // idle samples before the load: t < 0
  const threadsIdle = threadNames(pid);

  const lua = path.join(HERE, 'soak.lua');
  const args = [`-t${cfg.threads}`, `-c${cfg.conns}`, `-d${cfg.duration}s`, '--latency', '-s', lua, `${data}/`, '--', counts, cfg.traffic, tokens.join(','), outsider];
  t0 = Date.now(); cpu0 = cpuSeconds(gw.pid);
  const w = start('wrk-soak', cfg.wrkBin, args, { cpu: cfg.loadCpu });
  const heads = headDriver(data, tokens, cfg.traffic === 'varied' ? cfg.headRate : 0);
  const clock = clockDriver(cfg.clockRate, cfg.clockStep);
  if (cfg.clockRate > 0) log(`test clock: moved on by ${cfg.clockStep} s every ${fmt(cfg.clockStep / cfg.clockRate, 2)} s of load (${cfg.clockRate} gateway seconds a second)`);
  log(`load: wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s -s soak.lua, traffic ${cfg.traffic}; a sample every ${cfg.sample}s`);
  const killer = setTimeout(() => { try { process.kill(-w.pid, 'SIGKILL'); } catch {} }, (cfg.duration + 30) * 1000);
  const snapshots = [];
  const pendingSnaps = [...cfg.snapshots].sort((a, b) => a - b);
  let next = cfg.sample;
  while (!w.exited) {
    const now = (Date.now() - t0) / 1000;
    if (pendingSnaps.length && now >= pendingSnaps[0]) {
      const at = pendingSnaps.shift();
      const before = fs.readdirSync(heapDir).length;
      process.kill(pid, 'SIGUSR2');
      log(`heap snapshot asked (SIGUSR2) at t=${fmt(now, 0)}s`);
      // Wait for the file to be written whole (the main thread stops while it writes) before sampling on.
      for (let i = 0; i < 600 && fs.readdirSync(heapDir).length === before; i++) await sleep(100);
      let size = -1;
      for (let i = 0; i < 600; i++) {
        const f = fs.readdirSync(heapDir).filter((x) => x.endsWith('.heapsnapshot')).sort().at(-1);
        const sz = f ? fs.statSync(path.join(heapDir, f)).size : 0;
        if (sz > 0 && sz === size) { snapshots.push({ at, file: path.join(heapDir, f), mb: sz / 2 ** 20 }); break; }
        size = sz;
        await sleep(500);
      }
    }
    if (now >= next) {
      say(sampleNow('load'));
      next += cfg.sample;
    }
    await sleep(100);
  }
  clearTimeout(killer);
  await heads.stop();
  await clock.stop();
  forget(w);
  const text = fs.readFileSync(w.logFile, 'utf8');
  if (w.code !== 0) die(`wrk failed (exit ${w.code}):\n${text.slice(-1500)}`);
  const wrk = {
    requests: Number(text.match(/^\s*(\d+) requests in/m)?.[1] ?? NaN),
    rps: Number(text.match(/^Requests\/sec:\s+([\d.]+)/m)?.[1] ?? NaN),
    non2xx: Number(text.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0),
    sockErrors: (text.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/)?.slice(1) ?? []).reduce((a, b) => a + Number(b), 0),
    p50: text.match(/^\s*50%\s+(\S+)/m)?.[1] ?? '?', p99: text.match(/^\s*99%\s+(\S+)/m)?.[1] ?? '?',
  };
  const end = sampleNow('end');
  end.requests = Number.isFinite(wrk.requests) ? wrk.requests : end.requests;
  say(end);
  const loadEnd = end.t;
  // After the load: what stays held once the traffic stopped.
  for (let i = 1; i * cfg.sample <= cfg.settle; i++) {
    await sleep(cfg.sample * 1000);
    const s = sampleNow('after');
    s.requests = end.requests;
    say(s);
  }
  const obs = await observers();
  wrk.heads = heads.counts;
  wrk.clock = clock.state;
  report({ samples, wrk, obs, loadEnd, snapshots, threadsIdle, threadsEnd: threadNames(pid), pid, wrkV, upstreamUrl, upstreamPgid: upstreamProc.pid });
  if (snapshots.length) { cfg.keepTmp = true; log(`heap snapshots kept: ${snapshots.map((s) => s.file).join(' ')}`); }
}

// ---------------------------------------------------------------------------------------------- verdict
/** Least squares slope of y over x. */
function slope(xs, ys) {
  const n = xs.length;
  if (n < 2) return NaN;
  const mx = xs.reduce((a, b) => a + b, 0) / n, my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0, den = 0;
  for (let i = 0; i < n; i++) { num += (xs[i] - mx) * (ys[i] - my); den += (xs[i] - mx) ** 2; }
  return den === 0 ? NaN : num / den;
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The samples after the warm-up, cut in two halves of equal time. A half's level is its mean RSS, its floor and
 * peak its lowest and highest sample: the collectors' saw-tooth (tens of MB, a cycle of about a minute under this
 * load) moves single samples much more than the mean. A half's growth is the least-squares slope of RSS over the
 * requests answered in it, times those requests.
 */
function verdictOf(samples, loadEnd) {
  const judged = samples.filter((s) => (s.phase === 'load' || s.phase === 'end') && s.t >= cfg.warmup - 0.01);
  const tw = cfg.warmup, te = loadEnd, tm = (tw + te) / 2;
  const half = (xs, from, to) => {
    const rss = xs.map((s) => s.rss);
    const h = {
      from, to, n: xs.length, requests: xs.length ? xs.at(-1).requests - xs[0].requests : 0,
      level: mean(rss), floor: Math.min(...rss), peak: Math.max(...rss), anon: mean(xs.map((s) => s.anon)),
      perMillion: slope(xs.map((s) => s.requests), rss) * 1e6,
    };
    h.growth = (h.perMillion * h.requests) / 1e6;
    return h;
  };
  const h1 = half(judged.filter((s) => s.t < tm), tw, tm), h2 = half(judged.filter((s) => s.t >= tm), tm, te);
  const v = {
    tw, tm, te, h1, h2,
    perMillion: slope(judged.map((s) => s.requests), judged.map((s) => s.rss)) * 1e6,
    level: h2.level - h1.level, floor: h2.floor - h1.floor, peak: h2.peak - h1.peak,
  };
  if (h1.n < 3 || h2.n < 3) v.word = 'CANNOT TELL';
  else if (v.level <= cfg.flatMb && h2.growth <= cfg.flatMb) v.word = 'BOUNDED';
  else if (h1.perMillion > 0 && h2.perMillion <= 0.5 * h1.perMillion) v.word = 'FLATTENING';
  else v.word = 'GROWING';
  const d = `its mean ${fmt(v.level, 1)} MB from the first half's, its own trend ${fmt(h2.growth, 1)} MB`;
  v.sentence = {
    'CANNOT TELL': 'too few samples after the warm-up (a longer DURATION, or a shorter SAMPLE)',
    BOUNDED: `the last half stays where the first was (${d}; both within FLAT_MB=${cfg.flatMb}): flat at this horizon`,
    FLATTENING: `the last half is higher (${d}) but rises at ${fmt(h2.perMillion, 1)} MB per million requests against ${fmt(h1.perMillion, 1)} in the first: slowing down; run longer to see it stop`,
    GROWING: `the last half is higher (${d}) and rises at ${fmt(h2.perMillion, 1)} MB per million requests against ${fmt(h1.perMillion, 1)} in the first: no sign of a bound yet; run longer, or find what grows (HEAP_SNAPSHOTS)`,
  }[v.word];
  return v;
}

// ---------------------------------------------------------------------------------------------- report
/** Whole seconds, never "-0". */
const sec = (t) => fmt(Math.round(t) || 0, 0);
function report({ samples, wrk, obs, loadEnd, snapshots, threadsIdle, threadsEnd, pid, wrkV, upstreamUrl }) {
  const out = [];
  const cpuModel = os.cpus()[0]?.model ?? '?';
  out.push(`soak bench ${new Date().toISOString()}  ${NCPU} CPU (${cpuModel}), kernel ${os.release()}`);
  out.push(`versions: nginx ${version(cfg.nginxBin, ['-v'], /nginx\/(\S+)/)}, wrk ${wrkV}, node ${process.version}, undici ${pkgVersion(REPO, 'undici')}, uws-pack ${pkgVersion(REPO, 'uWebSockets.js')}`);
  out.push(`gateway: ${gatewayBuild(REPO, GATEWAY_CLI)}, SQLite, access log on (standard output on a FIFO read by an agent), metrics on, pid ${pid}${env.MEERKAT_NODE_ARGS ? `, node ${env.MEERKAT_NODE_ARGS}` : ''}`);
  out.push(`load: wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s -s bench/soak/soak.lua, traffic ${cfg.traffic}${cfg.traffic === 'varied' ? ` (${cfg.users} tokens + outsider + unknown tokens, 404s, HEAD, POST)` : ' (GET /bench/, one token)'}; `
    + (cfg.pin ? `gateway on cpu ${cfg.proxyCpu}, upstream + agent + wrk on cpu ${cfg.loadCpu}` : 'no pinning') + `; upstream ${upstreamUrl}`);
  out.push(`answers: ${wrk.requests} in ${cfg.duration}s (${fmt(wrk.rps, 0)} req/s), non-2xx ${wrk.non2xx}, socket errors ${wrk.sockErrors}, p50 ${wrk.p50}, p99 ${wrk.p99}`
    + (wrk.heads.sent ? `; HEAD from the harness ${wrk.heads.sent} (${Object.entries(wrk.heads.byStatus).map(([k, n]) => `${k}: ${n}`).join(', ')}${wrk.heads.errors ? `, errors ${wrk.heads.errors}` : ''})` : ''));
  if (cfg.clockRate > 0) out.push(`test clock: the gateway's clock moved ${fmt(wrk.clock.moved / 3600, 2)} h during the ${cfg.duration} s of load (${wrk.clock.moved} s in steps of ${cfg.clockStep} s${wrk.clock.refused ? `; ${wrk.clock.refused} steps refused or lost` : ''})`);
  const last = samples.filter((s) => s.phase !== 'idle').at(-1);
  if (last) out.push(`answers by class (the script's count): 2xx ${last.s2xx}, 4xx ${last.s4xx} (404 ${last.s404}), 5xx ${last.s5xx}; access lines the agent read ${last.lines}, dropped by the gateway ${obs.dropped}`);
  out.push(`metrics: endpoints listed per route ${Object.entries(obs.routes).map(([r, x]) => `${r} ${x.endpoints} (deduced ${x.deduced}${x.other ? ', with (other)' : ''})`).join(', ')}; last minute ${obs.minute?.requests ?? '?'} requests`);
  const names = (t) => Object.entries(t).map(([n, c]) => (c > 1 ? `${n} x${c}` : n)).join(', ');
  out.push(`threads: ${names(threadsEnd)} (RSS is the process's: the threads share one address space, /proc gives no per-thread share)`);
  out.push('');
  out.push('== memory over time (t: seconds since the load started; MB = MiB; rss = VmRSS, anon = RssAnon, pss from smaps_rollup) ==');
  let prev = null;
  out.push(table(['t_s', 'phase', 'requests', 'req/s', 'rss_mb', 'anon_mb', 'file_mb', 'pss_mb', 'hwm_mb', 'threads', 'gw_cpu_s', 'log_lines'],
    samples.map((s) => {
      const rps = prev && s.t - prev.t >= 1 && s.phase !== 'after' ? (s.requests - prev.requests) / (s.t - prev.t) : NaN;
      prev = s;
      return [sec(s.t), s.phase, s.requests, fmt(rps, 0), fmt(s.rss, 1), fmt(s.anon, 1), fmt(s.file, 1), fmt(s.pss, 1), fmt(s.hwm, 1), s.threads, fmt(s.cpu, 1), s.lines];
    })));
  const v = verdictOf(samples, loadEnd);
  const idle = samples.filter((s) => s.phase === 'idle').at(-1);
  const after = samples.filter((s) => s.phase === 'after');
  out.push('');
  out.push(`== verdict: the load after its first WARMUP=${cfg.warmup}s, in two halves of equal time ==`);
  const row = (label, h) => [label, `${sec(h.from)}-${sec(h.to)}`, h.n, h.requests, fmt(h.level, 1), fmt(h.floor, 1), fmt(h.peak, 1), fmt(h.anon, 1), fmt(h.perMillion, 1)];
  out.push(table(['', 'span_s', 'samples', 'requests', 'rss_mean', 'rss_min', 'rss_max', 'anon_mean', 'mb/M_req'], [
    ['idle, before load', sec(idle?.t), 1, 0, fmt(idle?.rss, 1), '', '', fmt(idle?.anon, 1), ''],
    row('first half', v.h1),
    row('last half', v.h2),
    ...(after.length ? [[`after the load`, `${sec(after[0].t)}-${sec(after.at(-1).t)}`, after.length, 0, fmt(mean(after.map((s) => s.rss)), 1), fmt(Math.min(...after.map((s) => s.rss)), 1), fmt(Math.max(...after.map((s) => s.rss)), 1), fmt(mean(after.map((s) => s.anon)), 1), '']] : []),
  ]));
  out.push(`rss growth per million requests after the warm-up: ${fmt(v.perMillion, 1)} MB (least squares over ${v.h1.n + v.h2.n} samples); first half ${fmt(v.h1.perMillion, 1)} MB (${fmt(v.h1.growth, 1)} MB over it), last half ${fmt(v.h2.perMillion, 1)} MB (${fmt(v.h2.growth, 1)} MB over it)`);
  out.push(`last half against first half: level (mean) ${fmt(v.level, 1)} MB, floor (min) ${fmt(v.floor, 1)} MB, peak (max) ${fmt(v.peak, 1)} MB; since idle: ${fmt(v.h2.level - (idle?.rss ?? NaN), 1)} MB`);
  out.push(`verdict: ${v.word}: ${v.sentence}`);
  if (snapshots.length) out.push(`heap snapshots (main thread): ${snapshots.map((s) => `t=${s.at}s ${s.file} (${fmt(s.mb, 0)} MB)`).join(', ')}`);
  if (wrk.sockErrors > 0) out.push(`WARNING: ${wrk.sockErrors} socket error(s): see the wrk log`);
  if (last && last.s5xx > 0) out.push(`WARNING: ${last.s5xx} answer(s) 5xx: the gateway or the upstream failed calls`);
  console.log(out.join('\n'));
  const json = { date: new Date().toISOString(), host: { ncpu: NCPU, cpuModel, kernel: os.release() }, config: cfg, wrk, observers: obs, threadsIdle, threadsEnd, samples, verdict: v, snapshots };
  fs.writeFileSync(path.join(TMP, 'results.json'), JSON.stringify(json, null, 2));
  if (cfg.outJson) { fs.writeFileSync(cfg.outJson, JSON.stringify(json, null, 2)); log(`results written to ${cfg.outJson}`); }
}

finish(main);
