#!/usr/bin/env node
// run.mjs - scheduler firing-lateness benchmark, run by hand (never part of the test suite). See bench/scheduler/README.md.
//
// For each scenario x mode (a fresh database and fresh gateways each time), all on 127.0.0.1:
//   upstream   upstream.mjs (uWS): answers 200 at once, records arrival time, x-due, Gateway-Job, Gateway-Job-Run
//   gateways   `node dist/src/cli.js start`: sqlite-1 (one node, SQLite in a temp dir), pg-1 (one node on a fresh
//              PostgreSQL database), pg-3 (three nodes on one fresh database, one vault key, distinct node names)
// Setup goes through the public APIs only: root signs in on the control plane, creates the role `bench-jobs`, the
// route `bench` (/bench -> upstream, rule roles [bench-jobs]) and a schedules token; the schedules are created on the
// internal plane(s) with that token, each carrying `x-due: <epoch ms of its turn>`.
//   burst   every schedule has the same `at` (a whole second, after creation has finished)
//   spread  `at` spread uniformly over SPREAD seconds (ms resolution: the API takes RFC 3339 fractions)
//   cron    `cron: "* * * * *"`, created in one minute: every first turn falls on the same minute boundary (opt-in)
// Lateness = arrival at the upstream - due. Also: calls/s, duplicates, missing calls, peak RSS of each gateway
// (VmRSS sampled, VmHWM; the actors are threads of the same process), gateway CPU, other load on the box.
// Everything started is in its own process group and is stopped by that id on exit, Ctrl-C, error or watchdog;
// every database it created is dropped.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
// MEERKAT_CLI: another build of the gateway (e.g. an export of an older commit, built); its checkout is three levels up.
const GATEWAY_CLI = path.resolve(process.env.MEERKAT_CLI || path.join(REPO, 'dist', 'src', 'cli.js'));
const GATEWAY_ROOT = path.resolve(GATEWAY_CLI, '..', '..', '..');
const T0 = Date.now();
const log = (msg) => process.stderr.write(`[${String(Math.round((Date.now() - T0) / 1000)).padStart(4)}s] ${msg}\n`);
class Fatal extends Error {}
let started = false; // before any process is started, errors just print and exit
const die = (msg) => {
  if (!started) { log(`ERROR: ${msg}`); process.exit(2); }
  throw new Fatal(msg);
};

// ---------------------------------------------------------------------------------------------- config
// Flags (--name=value) win over the environment variable of the same name in upper case (--schedules = SCHEDULES).
const flags = {};
for (const a of process.argv.slice(2)) {
  const m = a.match(/^--([a-z-]+)(?:=(.*))?$/);
  if (!m) { log(`ERROR: unknown argument ${a} (see --help)`); process.exit(2); }
  flags[m[1]] = m[2] ?? true;
}
if (flags.help || flags.h) {
  const readme = fs.readFileSync(path.join(HERE, 'README.md'), 'utf8');
  console.log(readme.match(/## Knobs[\s\S]*?(?=\n## )/)?.[0] ?? 'see bench/scheduler/README.md');
  process.exit(0);
}
const KNOWN_FLAGS = ['schedules', 'scenarios', 'modes', 'markdown', 'help', 'h'];
for (const f of Object.keys(flags)) if (!KNOWN_FLAGS.includes(f)) { log(`ERROR: unknown flag --${f} (known: --schedules, --scenarios, --modes, --markdown[=results.json])`); process.exit(2); }
const env = process.env;
const knob = (name) => flags[name.toLowerCase()] ?? env[name];
const num = (name, def, min = 0) => {
  const v = knob(name);
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) die(`${name}=${v}: expected a number >= ${min}`);
  return n;
};
const list = (name, def, known) => {
  const v = String(knob(name) ?? def).split(',').map((s) => s.trim()).filter(Boolean);
  for (const x of v) if (!known.includes(x)) die(`${name}: unknown value "${x}" (known: ${known.join(', ')})`);
  if (!v.length || new Set(v).size !== v.length) die(`${name}: list each value once`);
  return v;
};
const SCENARIOS = { 'sqlite-1': { db: 'sqlite', nodes: 1 }, 'pg-1': { db: 'postgres', nodes: 1 }, 'pg-3': { db: 'postgres', nodes: 3 } };
const MODES = ['burst', 'spread', 'cron'];
const cfg = {
  schedules: Math.floor(num('SCHEDULES', 10000, 1)),
  scenarios: list('SCENARIOS', 'sqlite-1,pg-1,pg-3', Object.keys(SCENARIOS)),
  modes: list('MODES', 'burst,spread', MODES),
  pgUrl: env.PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  conns: Math.floor(num('CONNS', 8, 1)),
  calibrate: Math.floor(num('CALIBRATE', 200, 1)),
  margin: num('MARGIN', 20, 1),
  spread: num('SPREAD', 60, 1),
  wait: num('WAIT', 120, 1),
  grace: num('GRACE', 3, 0),
  settle: num('SETTLE', 360, 1),
  sampleMs: num('SAMPLE_MS', 250, 20),
  startTimeout: num('GATEWAY_START_TIMEOUT', 60, 5),
  keepTmp: env.KEEP_TMP === '1',
  outJson: env.OUT_JSON || '',
};
const TARGET = { p99Ms: 100, rssMb: 300 };

// ---------------------------------------------------------------------------------------------- report
function verdict(r) {
  const missed = [];
  const p99 = r.lateness.p99;
  if (!(p99 <= TARGET.p99Ms)) missed.push(`p99 ${fmtMs(p99)} ms (${p99 === null ? 'no calls' : `${(p99 / TARGET.p99Ms).toFixed(1)}x the ${TARGET.p99Ms} ms target`})`);
  if (r.duplicates.total > 0) missed.push(`${r.duplicates.total} duplicate(s)`);
  if (r.missing > 0) missed.push(`${r.missing} missing`);
  const rssMax = Math.max(...r.rss.peakMb);
  if (!(rssMax < TARGET.rssMb)) missed.push(`RSS ${rssMax} MB (+${rssMax - TARGET.rssMb} MB)`);
  if (r.creation.headroomS < 0) missed.push('creation overran the due time');
  return missed.length ? `missed: ${missed.join('; ')}` : 'met';
}
const fmtMs = (x) => (x === null || x === undefined ? 'NA' : Math.abs(x) >= 100 ? String(Math.round(x)) : x.toFixed(1));
const COLUMNS = ['scenario', 'mode', 'schedules', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'calls/s', 'dups', 'missing', 'peak RSS MB/node', 'creation s (/s)', 'other load %core'];
const row = (r) => [r.scenario, r.mode, r.schedules, fmtMs(r.lateness.p50), fmtMs(r.lateness.p90), fmtMs(r.lateness.p99), fmtMs(r.lateness.max),
  r.callsPerS ?? 'NA', r.duplicates.total, r.missing, r.rss.peakMb.join('/'), `${r.creation.seconds} (${r.creation.perS})`, r.cpu.otherPctOfOneCore];
function table(header, rows) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((x) => String(x[i]).length)));
  const line = (x) => x.map((c, i) => (i < 2 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}
function markdown(runs) {
  const out = [`| ${[...COLUMNS, 'verdict'].join(' | ')} |`, `|${[...COLUMNS, 'verdict'].map((_, i) => (i < 2 || i === COLUMNS.length ? '---' : '---:')).join('|')}|`];
  for (const r of runs) out.push(`| ${[...row(r), verdict(r)].join(' | ')} |`);
  return out.join('\n');
}
/** The lines under the table for one run. */
function detail(r) {
  const out = [];
  out.push(`${r.scenario} ${r.mode}: due ${r.due.first}${r.mode === 'spread' ? ` .. ${r.due.last}` : ''}; first call ${fmtMs(r.firstArrivalMs)} ms, last ${fmtMs(r.lastArrivalMs)} ms after the first due; `
    + `lateness min ${fmtMs(r.lateness.min)} mean ${fmtMs(r.lateness.mean)} ms; calls ${r.calls} (dups: ${r.duplicates.runs} run ids, ${r.duplicates.schedules} schedules${r.duplicates.total ? `, the first ${r.firstDuplicateS} s after T` : ''}${r.mode === 'cron' ? `; later turns ${r.laterTurns}` : ''}; attempt>1: ${r.attemptsAbove1}; unknown ${r.unknown})`);
  out.push(`  creation ${r.creation.seconds} s (${r.creation.perS}/s${r.creation.calibrationPerS ? `, first ${Math.min(cfg.calibrate, r.schedules)} at ${r.creation.calibrationPerS}/s` : ''}), headroom ${r.creation.headroomS} s, retried ${r.creation.retried};`
    + ` RSS MB peak ${r.rss.peakMb.join('/')}, configured ${r.rss.readyMb.join('/')}, after creation ${r.rss.afterCreateMb.join('/')}, after firing ${r.rss.afterFiringMb.join('/')};`
    + ` CPU s in ${r.cpu.windowS} s: gateway ${r.cpu.gatewaySeconds.join('/')}, upstream ${r.cpu.upstreamSeconds}, others ${r.cpu.otherPctOfOneCore}% of a core`);
  const s = r.runs;
  out.push(`  runs recorded${s.settled ? ` ${s.seconds} s after the wait` : ` NOT settled after ${s.seconds} s`}: ${JSON.stringify({ states: s.states, byNode: s.byNode, inFlight: s.inFlight, finished: s.finished, slowestListMs: s.slowestListMs, error: s.error })}`);
  out.push(`  exits ${r.exits.join('/')}; log lines: ${r.logs.map((l) => `${l.node} ${l.error} error / ${l.warn} warn`).join(', ')}`);
  for (const l of r.logs) for (const m of l.messages) out.push(`    ${l.node}: ${m}`);
  if (r.dueMismatch) out.push(`  WARNING: ${r.dueMismatch} call(s) carried an x-due other than the one written`);
  if (r.clockSkewMs > 5) out.push(`  note: monotonic vs wall clock differ by up to ${r.clockSkewMs} ms in the upstream`);
  return out;
}
function report(runs, meta) {
  const out = [];
  out.push(`scheduler bench ${meta.date}  ${meta.host.ncpu} CPU (${meta.host.cpuModel}), kernel ${meta.host.kernel}, node ${meta.host.node}`);
  out.push(`gateway: ${meta.gateway}`);
  out.push(`lateness = arrival at the upstream - due (ms); calls/s from the first to the last arrival; other load = CPU of processes this script did not start, during the firing`);
  out.push('');
  out.push(table([...COLUMNS, 'verdict'], runs.map((r) => [...row(r), verdict(r)])));
  out.push('');
  for (const r of runs) out.push(...detail(r));
  out.push(`elapsed ${Math.round((Date.now() - T0) / 1000)}s`);
  return out.join('\n');
}

// --markdown=<results.json>: render an earlier run's rows for bench/RESULTS.md, start nothing.
if (typeof flags.markdown === 'string') {
  let data;
  try { data = JSON.parse(fs.readFileSync(flags.markdown, 'utf8')); } catch (e) { die(`--markdown=${flags.markdown}: ${e.message}`); }
  console.log(markdown(data.runs));
  process.exit(0);
}

if (!fs.existsSync(GATEWAY_CLI)) die(`${GATEWAY_CLI} is missing: run npm run build first (cd ${GATEWAY_ROOT} && npm run build)`);
const runsPlanned = cfg.scenarios.length * cfg.modes.length;
// Watchdog: gateway starts, creation at a pessimistic 20 schedules/s, the margin, the spread, the waits.
const maxSeconds = num('MAX_SECONDS', Math.ceil(runsPlanned * (3 * cfg.startTimeout + (2 * cfg.schedules) / 20 + cfg.margin + cfg.spread + 60 + cfg.wait + cfg.grace + cfg.settle + 60)), 10);

// ---------------------------------------------------------------------------------------------- processes
let TMP = null; // created once the preflight checks passed
const procs = []; // { name, pid, child, exited, code, logFile }: each one leads its own process group (detached => setsid)
const databases = new Set(); // PostgreSQL databases created and not dropped yet

function start(name, cmd, args, { extraEnv = {}, cleanEnv = false, logFile, cwd = REPO } = {}) {
  const fd = fs.openSync(logFile, 'a');
  const base = cleanEnv ? Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('GATEWAY_'))) : env;
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', fd, fd], cwd, env: { ...base, ...extraEnv } });
  fs.closeSync(fd);
  if (!child.pid) die(`cannot start ${name}: ${cmd} ${args.join(' ')}`);
  const p = { name, pid: child.pid, child, exited: false, code: null, logFile };
  child.on('exit', (code, sig) => { p.exited = true; p.code = code ?? sig; });
  child.on('error', (e) => { p.exited = true; p.code = e.message; });
  procs.push(p);
  return p;
}
const groupAlive = (pgid) => { try { process.kill(-pgid, 0); return true; } catch { return false; } };
async function stopGroup(p, graceMs = 10_000) {
  if (groupAlive(p.pid)) {
    try { process.kill(-p.pid, 'SIGTERM'); } catch {}
    for (let t = 0; t < graceMs && groupAlive(p.pid); t += 50) await sleep(50);
    if (groupAlive(p.pid)) { p.killed = true; try { process.kill(-p.pid, 'SIGKILL'); } catch {} }
    for (let t = 0; t < 2000 && groupAlive(p.pid); t += 50) await sleep(50);
  }
  for (let t = 0; t < 1000 && !p.exited; t += 20) await sleep(20); // the exit event, for the code
  procs.splice(procs.indexOf(p), 1);
}
let pgModule = null;
async function pgAdmin(sql) {
  pgModule ??= (await import('pg')).default;
  const c = new pgModule.Client({ connectionString: cfg.pgUrl, connectionTimeoutMillis: 5000 });
  await c.connect();
  try { return await c.query(sql); } finally { await c.end(); }
}
async function dropDatabase(name) {
  await pgAdmin(`drop database if exists ${name} with (force)`);
  databases.delete(name);
}
let cleaning = null;
let failed = false;
function cleanup() {
  cleaning ??= (async () => {
    await Promise.all([...procs].reverse().map((p) => stopGroup(p, 5000)));
    const left = procs.filter((p) => groupAlive(p.pid));
    if (left.length) log(`WARNING: still running: ${left.map((p) => `${p.name} (pgid ${p.pid})`).join(', ')}`);
    for (const db of [...databases]) {
      try { await dropDatabase(db); } catch (e) { log(`WARNING: could not drop database ${db}: ${e.message}`); }
    }
    if (!TMP) return;
    if (cfg.keepTmp || failed) log(`temp files kept in ${TMP}`);
    else fs.rmSync(TMP, { recursive: true, force: true });
  })();
  return cleaning;
}
process.on('exit', () => { for (const p of procs) if (groupAlive(p.pid)) { try { process.kill(-p.pid, 'SIGKILL'); } catch {} } });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => { log(`${sig}: stopping`); failed = true; cleanup().finally(() => process.exit(130)); });
}
const watchdog = setTimeout(() => {
  log(`watchdog: MAX_SECONDS=${maxSeconds} exceeded, stopping`);
  failed = true;
  cleanup().finally(() => process.exit(124));
}, maxSeconds * 1000);
watchdog.unref();

// ---------------------------------------------------------------------------------------------- helpers
const tail = (file, n = 20) => { try { return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n'); } catch { return ''; } };
const readJsonLines = (file) => {
  const out = [];
  for (const line of (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '').split('\n')) {
    if (!line.startsWith('{')) continue;
    try { out.push(JSON.parse(line)); } catch {}
  }
  return out;
};
async function waitFor(what, proc, timeoutS, probe) {
  const until = Date.now() + timeoutS * 1000;
  let last = 'no answer';
  while (Date.now() < until) {
    if (proc?.exited) die(`${proc.name} exited (${proc.code}) while waiting for ${what}. Log:\n${tail(proc.logFile)}`);
    try {
      const r = await probe();
      if (r === true) return;
      last = r || last;
    } catch (e) { last = e.cause?.code || e.message; }
    await sleep(100);
  }
  die(`${what}: not done after ${timeoutS}s (last: ${last})${proc ? `. Log of ${proc.name}:\n${tail(proc.logFile)}` : ''}`);
}
async function http(base, method, p, { body, headers = {}, timeoutMs = 30_000 } = {}) {
  const r = await fetch(`${base}${p}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await r.text();
  let json;
  try { json = text ? JSON.parse(text) : undefined; } catch {}
  return { status: r.status, json, text, res: r };
}
async function must(base, method, p, opts, want = [200, 201, 204]) {
  const a = await http(base, method, p, opts);
  if (!want.includes(a.status)) die(`${method} ${base}${p}: HTTP ${a.status} ${a.text.slice(0, 300)}`);
  return a;
}
const version = (cmd, args) => { const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 5000 }); return r.error ? '?' : r.stdout.trim(); };
function gatewayBuild() {
  const git = (...a) => spawnSync('git', ['-C', GATEWAY_ROOT, ...a], { encoding: 'utf8', timeout: 5000 });
  // A checkout: its commit, and whether src/ differs from it. Otherwise (an export) its directory name.
  const inside = git('rev-parse', '--show-toplevel').stdout?.trim() === GATEWAY_ROOT;
  const sha = inside ? git('rev-parse', '--short', 'HEAD').stdout?.trim() : '';
  const dirty = inside ? git('status', '--porcelain', '--', 'src').stdout?.trim() : '';
  let builtAt = '?';
  try { builtAt = fs.statSync(GATEWAY_CLI).mtime.toISOString(); } catch {}
  return `${path.relative(REPO, GATEWAY_CLI) || GATEWAY_CLI} built ${builtAt}${sha ? `, git ${sha}${dirty ? ' + uncommitted changes in src/' : ''}` : ` (not a git checkout: ${GATEWAY_ROOT})`}`;
}
/** Runs fn over items with at most `limit` at a time; the first error stops the rest. */
async function parallel(items, limit, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async (_, worker) => {
    while (next < items.length) { const i = next++; await fn(items[i], worker); }
  }));
}

// ------------------------------------------------------------------ /proc: memory and CPU (Linux only)
const procStatus = (pid) => {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch { return null; }
};
function busyJiffies() { // all cores: busy and total
  const v = fs.readFileSync('/proc/stat', 'utf8').match(/^cpu\s+(.*)$/m)[1].split(/\s+/).map(Number);
  return { busy: v[0] + v[1] + v[2] + v[5] + v[6] + v[7], total: v.slice(0, 8).reduce((a, b) => a + b, 0) };
}
function groupTicks(pgids) { // utime+stime of every process (all threads) of each process group
  const by = new Map(pgids.map((g) => [g, 0]));
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let s;
    try { s = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); } catch { continue; }
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    if (by.has(Number(f[2]))) by.set(Number(f[2]), by.get(Number(f[2])) + Number(f[11]) + Number(f[12]));
  }
  return by;
}
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
const selfTicks = () => { const u = process.cpuUsage(); return ((u.user + u.system) / 1e6) * CLK_TCK; };
const cpuSnap = (pgids) => ({ t: Date.now(), box: busyJiffies(), groups: groupTicks(pgids), self: selfTicks() });
/** Between two snaps: each group's CPU seconds, and the rest of the box (not ours) in % of one core. */
function cpuDiff(a, b) {
  const secs = Math.max(0.001, (b.t - a.t) / 1000);
  const groups = new Map([...b.groups].map(([g, v]) => [g, (v - (a.groups.get(g) ?? 0)) / CLK_TCK]));
  const ours = [...groups.values()].reduce((s, v) => s + v, 0) + (b.self - a.self) / CLK_TCK;
  const boxBusy = (b.box.busy - a.box.busy) / CLK_TCK;
  return { seconds: secs, groups, otherPct: Math.max(0, Math.round((100 * (boxBusy - ours)) / secs)) };
}

// ---------------------------------------------------------------------------------------------- one run
const ROLE = 'bench-jobs';
const ROUTE = 'bench';

/** Starts one gateway node and waits for its three plain doors and /readyz. */
async function startNode(dir, i, scenario, shared) {
  const nodeDir = path.join(dir, `node-${i}`);
  fs.mkdirSync(nodeDir);
  const logFile = path.join(dir, `node-${i}.log`);
  const extraEnv = {
    GATEWAY_ADDR: '127.0.0.1:0', GATEWAY_TLS_ADDR: '127.0.0.1:0',
    GATEWAY_ADMIN_ADDR: '127.0.0.1:0', GATEWAY_ADMIN_TLS_ADDR: '127.0.0.1:0',
    GATEWAY_INTERNAL_ADDR: '127.0.0.1:0', GATEWAY_INTERNAL_TLS_ADDR: '127.0.0.1:0',
    GATEWAY_DATA_DIR: nodeDir, GATEWAY_ROOT_PASSWORD: shared.rootPassword, GATEWAY_VAULT_KEY: shared.vaultKey,
    GATEWAY_NODE_NAME: `${scenario}-node-${i}`, GATEWAY_LOG_FORMAT: 'json', GATEWAY_LOG_LEVEL: 'info', GATEWAY_DRAIN_TIMEOUT: '2',
    ...(shared.databaseUrl ? { GATEWAY_DATABASE_URL: shared.databaseUrl } : {}),
  };
  const proc = start(`${scenario}-node-${i}`, process.execPath, [GATEWAY_CLI, 'start'], { extraEnv, cleanEnv: true, logFile, cwd: GATEWAY_ROOT });
  const urls = {};
  await waitFor(`the listening lines of ${proc.name}`, proc, cfg.startTimeout, () => {
    for (const r of readJsonLines(logFile)) {
      if (r.msg === 'listening' && r.plane && r.address && (r.protocol ?? 'http') === 'http') urls[r.plane] = `http://${r.address}`;
    }
    return (urls.data && urls.control && urls.internal) ? true : `planes so far: ${Object.keys(urls).join(', ') || 'none'}`;
  });
  await waitFor(`${proc.name} /readyz`, proc, cfg.startTimeout, async () => {
    const a = await http(urls.control, 'GET', '/readyz', { timeoutMs: 2000 });
    return a.status === 200 || `HTTP ${a.status} ${a.text.slice(0, 200)}`;
  });
  return { name: extraEnv.GATEWAY_NODE_NAME, proc, urls, logFile };
}

/** Root signs in on node 0's control plane, creates role, route and the schedules token. */
async function configure(node, shared, upstreamUrl) {
  const control = node.urls.control;
  const session = await must(control, 'POST', '/api/session', { body: { name: 'root', password: shared.rootPassword }, headers: { origin: control } }, [200]);
  const cookie = session.res.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('mk_session='));
  if (!cookie) die('POST /api/session: no mk_session cookie in the answer');
  const auth = { cookie, origin: control };
  await must(control, 'PUT', `/api/roles/${ROLE}`, { body: {}, headers: auth });
  await must(control, 'PUT', `/api/routes/${ROUTE}`, { body: { upstream: upstreamUrl, paths: ['/bench'], rule: { roles: [ROLE] } }, headers: auth });
  const token = (await must(control, 'POST', '/api/tokens', { body: { name: 'scheduler-bench', kind: 'schedules', routes: [ROUTE], roles: [ROLE] }, headers: auth })).json?.token;
  if (!token) die('POST /api/tokens: no token in the answer');
  return token;
}

/** Every node knows the route (its data plane refuses an anonymous call: 401) and the token. */
async function waitConfigured(nodes, token) {
  for (const n of nodes) {
    await waitFor(`${n.name} learning the route`, n.proc, 30, async () => {
      const a = await http(n.urls.data, 'POST', '/bench/probe', { timeoutMs: 2000 });
      return a.status === 401 || `HTTP ${a.status}`;
    });
    await waitFor(`${n.name} learning the token`, n.proc, 30, async () => {
      const a = await http(n.urls.internal, 'GET', '/api/schedules', { headers: { authorization: `Bearer ${token}` }, timeoutMs: 5000 });
      return a.status === 200 || `HTTP ${a.status} ${a.text.slice(0, 200)}`;
    });
  }
}

const iso = (ms) => new Date(ms).toISOString(); // RFC 3339 with milliseconds and Z
const scheduleBody = (i, due, mode) => ({
  routeId: ROUTE, path: `/bench/s/${i}`, roles: [ROLE],
  ...(mode === 'cron' ? { cron: '* * * * *' } : { at: iso(due) }),
  headers: { 'x-due': mode === 'cron' ? 'cron' : String(due) },
});

/**
 * Creates the schedules. `at` is fixed at creation, so the due time must lie after the end of the
 * creation: the first CALIBRATE schedules are created with a placeholder a day ahead, their rate
 * gives T (estimated end x 1.5 + MARGIN, a whole second), the rest are created with their real `at`,
 * then the first ones are replaced (PUT) with theirs. cron: the first turns are the next minute
 * boundary of each creation; creation starts just after a boundary when it should fit in the minute.
 */
async function createSchedules(nodes, token, mode, n, rateHint) {
  const pools = nodes.map((nd) => new Pool(nd.urls.internal, { connections: cfg.conns, pipelining: 1 }));
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const ids = new Array(n);
  const due = new Array(n);
  let errors = 0;
  const send = async (method, p, body, worker) => {
    for (let attempt = 1; ; attempt++) {
      const pool = pools[worker % pools.length];
      try {
        const r = await pool.request({ method, path: p, headers, body: JSON.stringify(body), headersTimeout: 60_000, bodyTimeout: 60_000 });
        const text = await r.body.text();
        if (r.statusCode === 200 || r.statusCode === 201) { done++; return JSON.parse(text); }
        if (attempt >= 3 || r.statusCode < 500) die(`${method} ${p}: HTTP ${r.statusCode} ${text.slice(0, 300)}`);
        errors++;
        log(`  ${method} ${p}: HTTP ${r.statusCode} ${text.slice(0, 200)}; trying again`);
      } catch (e) {
        if (e instanceof Fatal || attempt >= 3) throw e;
        errors++;
        log(`  ${method} ${p}: ${e.code || e.message}; trying again`);
      }
    }
  };
  const conc = cfg.conns * nodes.length;
  const t0 = Date.now();
  // Progress every 10 s: how many, the rate of the last 10 s, and (at/spread) the time left before the first due.
  let done = 0, lastDone = 0, lastAt = t0, T;
  const progress = setInterval(() => {
    const now = Date.now();
    const rate = ((done - lastDone) * 1000) / (now - lastAt);
    lastDone = done; lastAt = now;
    log(`  ${done}/${n} written, ${rate.toFixed(0)}/s over the last 10 s${T ? `; first due in ${Math.round((T - now) / 1000)} s, ${Math.round((n + Math.min(cfg.calibrate, n) - done) / Math.max(rate, 0.1))} s of writes left at this rate` : ''}`);
  }, 10_000);
  progress.unref();
  let calibrationRate = null;
  if (mode === 'cron') {
    const est = rateHint ? n / rateHint : null;
    const intoMinute = Date.now() % 60_000;
    if (est !== null && est < 50 && intoMinute > 2000) {
      const waitMs = 60_000 - intoMinute + 500;
      log(`  cron: waiting ${Math.round(waitMs / 1000)} s for the next minute boundary (creation estimated at ${est.toFixed(1)} s)`);
      await sleep(waitMs);
    } else if (est === null || est >= 50) log(`  cron: creation may cross a minute boundary (estimate ${est === null ? 'unknown' : `${est.toFixed(0)} s`}); first turns then fall on several boundaries`);
    const tc = Date.now();
    await parallel([...Array(n).keys()], conc, async (i, w) => {
      const s = await send('POST', '/api/schedules', scheduleBody(i, null, mode), w);
      ids[i] = s.id;
      due[i] = s.nextRunAt * 1000;
    });
    const end = Date.now();
    clearInterval(progress);
    return { ids, due, T: Math.min(...due), createStart: tc, createEnd: end, seconds: (end - tc) / 1000, calibrationRate, errors, pools };
  }
  const C = Math.min(cfg.calibrate, n);
  const placeholder = Math.ceil((Date.now() + 86_400_000) / 1000) * 1000;
  await parallel([...Array(C).keys()], conc, async (i, w) => { ids[i] = (await send('POST', '/api/schedules', scheduleBody(i, placeholder, mode), w)).id; });
  calibrationRate = C / Math.max(0.001, (Date.now() - t0) / 1000);
  const estS = n / calibrationRate; // the n - C creations left plus the C replacements
  T = Math.ceil((Date.now() + estS * 1500 + cfg.margin * 1000) / 1000) * 1000;
  for (let i = 0; i < n; i++) due[i] = mode === 'burst' ? T : T + Math.floor((i * cfg.spread * 1000) / n);
  log(`  ${C} created at ${calibrationRate.toFixed(0)}/s: the first turn is due at ${iso(T)} (in ${((T - Date.now()) / 1000).toFixed(0)} s)`);
  await parallel([...Array(n - C).keys()].map((k) => k + C), conc, async (i, w) => { ids[i] = (await send('POST', '/api/schedules', scheduleBody(i, due[i], mode), w)).id; });
  await parallel([...Array(C).keys()], conc, async (i, w) => {
    const s = await send('PUT', `/api/schedules/${ids[i]}`, scheduleBody(i, due[i], mode), w);
    if (s.nextRunAt !== Math.floor(due[i] / 1000)) die(`PUT ${ids[i]}: nextRunAt ${s.nextRunAt}, expected ${Math.floor(due[i] / 1000)}`);
  });
  const end = Date.now();
  clearInterval(progress);
  return { ids, due, T, createStart: t0, createEnd: end, seconds: (end - t0) / 1000, calibrationRate, errors, pools };
}

/** Samples VmRSS / VmHWM of each node until stopped; keeps the peaks and a few named moments. */
function rssSampler(nodes) {
  const peak = nodes.map(() => ({ rss: 0, hwm: 0 }));
  const marks = {};
  const sample = () => nodes.forEach((nd, i) => {
    const s = procStatus(nd.proc.pid);
    if (!s) return;
    peak[i].rss = Math.max(peak[i].rss, s.rss);
    peak[i].hwm = Math.max(peak[i].hwm, s.hwm);
  });
  const timer = setInterval(sample, cfg.sampleMs);
  sample();
  return {
    mark(name) { sample(); marks[name] = nodes.map((nd) => Math.round(procStatus(nd.proc.pid)?.rss ?? NaN)); },
    stop() { sample(); clearInterval(timer); return { peak, marks }; },
  };
}

/** Counts the error and warn lines of a node's log, with the distinct messages. */
function scanLog(node) {
  const counts = { error: 0, warn: 0 };
  const msgs = new Map();
  for (const r of readJsonLines(node.logFile)) {
    if (r.level !== 'error' && r.level !== 'warn') continue;
    counts[r.level]++;
    const key = `${r.level}: ${r.msg}${r.err || r.error || r.reason ? ` (${String(r.err ?? r.error ?? r.reason).slice(0, 200)})` : ''}`;
    msgs.set(key, (msgs.get(key) ?? 0) + 1);
  }
  return { node: node.name, ...counts, messages: [...msgs].slice(0, 8).map(([m, c]) => `${c}x ${m}`) };
}

const pct = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] : NaN);
const round1 = (x) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : null);

/** From the upstream's records: lateness of each schedule's first call, duplicates, missing calls. */
function analyse(mode, plan, dump) {
  const F = Object.fromEntries(dump.fields.map((f, i) => [f, i]));
  const index = new Map(plan.ids.map((id, i) => [id, i]));
  const byJob = new Map();
  const runs = new Map();
  let unknown = 0, dueMismatch = 0, clockSkew = 0;
  for (const c of dump.calls) {
    const i = index.get(c[F.job]);
    if (i === undefined) { unknown++; continue; }
    if (!byJob.has(i)) byJob.set(i, []);
    byJob.get(i).push(c);
    runs.set(c[F.run], (runs.get(c[F.run]) ?? 0) + 1);
    if (mode !== 'cron' && c[F.due] !== plan.due[i]) dueMismatch++;
    clockSkew = Math.max(clockSkew, Math.abs(c[F.at] - c[F.wall]));
  }
  const late = [];
  let dupSchedules = 0, laterTurns = 0, attemptsAbove1 = 0, firstDup = Infinity;
  for (const [i, cs] of byJob) {
    late.push(cs[0][F.at] - plan.due[i]);
    for (let k = 1; k < cs.length; k++) {
      // An `at` schedule fires once: any second call is a duplicate. cron: a next turn comes a minute on;
      // a call of the same schedule within 30 s of the previous one is counted as a duplicate.
      if (mode === 'cron' && cs[k][F.at] - cs[k - 1][F.at] >= 30_000) laterTurns++;
      else { dupSchedules++; firstDup = Math.min(firstDup, cs[k][F.at]); }
    }
    for (const c of cs) if ((c[F.attempt] ?? 1) > 1) attemptsAbove1++;
  }
  const dupRuns = [...runs.values()].reduce((s, v) => s + (v > 1 ? v - 1 : 0), 0);
  late.sort((a, b) => a - b);
  const ats = [...byJob.values()].map((cs) => cs[0][F.at]); // first calls: a late re-send does not stretch the span
  const first = Math.min(...ats), last = Math.max(...ats);
  const timeline = {}; // arrivals per second from the first due, for the JSON
  for (const c of dump.calls) { const s = Math.floor((c[F.at] - plan.T) / 1000); timeline[s] = (timeline[s] ?? 0) + 1; }
  return {
    calls: dump.calls.length, scheduled: byJob.size, missing: plan.ids.length - byJob.size, unknown,
    duplicates: { runs: dupRuns, schedules: dupSchedules, total: Math.max(dupRuns, dupSchedules) }, laterTurns, attemptsAbove1,
    lateness: {
      min: round1(late[0]), p50: round1(pct(late, 0.5)), p90: round1(pct(late, 0.9)), p99: round1(pct(late, 0.99)), max: round1(late[late.length - 1]),
      mean: round1(late.reduce((s, v) => s + v, 0) / late.length),
    },
    firstArrivalMs: round1(first - plan.T), lastArrivalMs: round1(last - plan.T),
    firstDuplicateS: Number.isFinite(firstDup) ? round1((firstDup - plan.T) / 1000) : null,
    callsPerS: ats.length > 1 && last > first ? Math.round(((ats.length - 1) * 1000) / (last - first)) : null,
    dueMismatch, clockSkewMs: round1(clockSkew), timeline,
  };
}

/**
 * Every schedule of the token: the list answers pages (a JSON array each) and names the next in
 * its Link header, a reference relative to the address called.
 */
async function listAll(base, token, timeoutMs) {
  const list = [];
  let next = '/api/schedules?limit=1000';
  const until = Date.now() + timeoutMs;
  while (next) {
    const a = await http(base, 'GET', next, { headers: { authorization: `Bearer ${token}` }, timeoutMs: Math.max(1000, until - Date.now()) });
    if (a.status !== 200) return a;
    list.push(...a.json);
    const target = a.res.headers.get('link')?.match(/<([^>]*)>;\s*rel="next"/)?.[1];
    const url = target ? new URL(target, `${base}${next}`) : null;
    next = url ? `${url.pathname}${url.search}` : null;
  }
  return { status: 200, list };
}

/** Until every schedule's run is recorded (no run in flight, a last run for each), or SETTLE seconds. */
async function settle(node, token, mode, n) {
  const t0 = Date.now();
  let last = null;
  let slowest = 0;
  while (Date.now() - t0 <= cfg.settle * 1000) {
    // The list waits behind the outcomes the actor still has to record: it may be slow, or not answer in time.
    const asked = Date.now();
    let a;
    try {
      a = await listAll(node.urls.internal, token, Math.max(1000, cfg.settle * 1000 - (asked - t0)));
    } catch (e) { last = { ...last, error: `GET /api/schedules: ${e.cause?.code || e.message} after ${round1((Date.now() - asked) / 1000)} s` }; continue; }
    slowest = Math.max(slowest, Date.now() - asked);
    if (a.status !== 200) { last = { ...last, error: `HTTP ${a.status} ${a.text.slice(0, 200)}` }; await sleep(2000); continue; }
    const list = a.list;
    const states = {}, byNode = {};
    let inFlight = 0, withRun = 0, finished = 0;
    for (const s of list) {
      if (s.inFlight) inFlight++;
      if (s.finished) finished++;
      if (s.lastRun) {
        withRun++;
        states[s.lastRun.state] = (states[s.lastRun.state] ?? 0) + 1;
        byNode[s.lastRun.node] = (byNode[s.lastRun.node] ?? 0) + 1;
      }
    }
    last = { schedules: list.length, inFlight, withRun, finished, states, byNode, slowestListMs: slowest };
    if (inFlight === 0 && withRun >= n && (mode === 'cron' || finished >= n)) return { ...last, seconds: round1((Date.now() - t0) / 1000), settled: true };
    await sleep(5000);
  }
  return { ...last, slowestListMs: slowest, seconds: round1((Date.now() - t0) / 1000), settled: false };
}

async function runOne(scenario, mode, rateHints) {
  const sc = SCENARIOS[scenario];
  const n = cfg.schedules;
  const tag = `${scenario}-${mode}`;
  const dir = path.join(TMP, tag);
  fs.mkdirSync(dir);
  log(`== ${tag}: ${n} schedules, ${sc.nodes} node(s) on ${sc.db}`);

  const up = start(`${tag}-upstream`, process.execPath, [path.join(HERE, 'upstream.mjs'), '0'], { logFile: path.join(dir, 'upstream.log') });
  let upUrl;
  await waitFor('the upstream', up, 10, () => {
    const m = fs.readFileSync(up.logFile, 'utf8').match(/listening on (127\.0\.0\.1:\d+)/);
    if (m) upUrl = `http://${m[1]}`;
    return !!m;
  });

  const shared = { rootPassword: randomBytes(18).toString('base64url'), vaultKey: randomBytes(32).toString('base64'), databaseUrl: null };
  let dbName = null;
  if (sc.db === 'postgres') {
    dbName = `mk_bench_${randomBytes(6).toString('hex')}`;
    await pgAdmin(`create database ${dbName}`);
    databases.add(dbName);
    const u = new URL(cfg.pgUrl);
    u.pathname = `/${dbName}`;
    shared.databaseUrl = u.toString();
  }
  // The first node migrates the database and creates root; the others start after it.
  const nodes = [await startNode(dir, 1, scenario, shared)];
  nodes.push(...await Promise.all(Array.from({ length: sc.nodes - 1 }, (_, k) => startNode(dir, k + 2, scenario, shared))));
  const rss = rssSampler(nodes);
  const token = await configure(nodes[0], shared, upUrl);
  await waitConfigured(nodes, token);
  rss.mark('ready');
  log(`  ${nodes.map((nd) => `${nd.name} internal ${nd.urls.internal}`).join(' | ')}; upstream ${upUrl}`);

  const plan = await createSchedules(nodes, token, mode, n, rateHints[scenario]);
  rateHints[scenario] = n / plan.seconds;
  await Promise.all(plan.pools.map((p) => p.close()));
  rss.mark('created');
  const lastDue = Math.max(...plan.due);
  const headroomS = round1((plan.T - plan.createEnd) / 1000);
  log(`  created ${n} in ${plan.seconds.toFixed(1)} s (${(n / plan.seconds).toFixed(0)}/s); first due in ${headroomS} s, last due ${iso(lastDue)}`);
  if (headroomS < 0) log('  WARNING: creation ended after the first due time: those turns fire late because of the bench, not the engine');

  // Firing: CPU from 1 s before the first due until the last call (or the deadline).
  const pgids = [...nodes.map((nd) => nd.proc.pid), up.pid];
  await sleep(Math.max(0, plan.T - 1000 - Date.now()));
  const cpuA = cpuSnap(pgids);
  const deadline = lastDue + cfg.wait * 1000;
  let stats = { calls: 0, jobs: 0 };
  let lastLog = 0;
  while (Date.now() < deadline) {
    for (const nd of nodes) if (nd.proc.exited) die(`${nd.name} exited (${nd.proc.code}) during the run. Log:\n${tail(nd.proc.logFile)}`);
    stats = (await http(upUrl, 'GET', '/__stats', { timeoutMs: 5000 })).json;
    if (stats.jobs >= n) break;
    if (Date.now() - lastLog > 10_000 && Date.now() > plan.T) { lastLog = Date.now(); log(`  ${stats.jobs}/${n} schedules called so far`); }
    await sleep(200);
  }
  const cpuB = cpuSnap(pgids);
  rss.mark('fired');
  if (stats.jobs < n) log(`  WARNING: ${n - stats.jobs} schedule(s) not called ${cfg.wait} s after the last due time`);
  // Until every run is recorded: a call re-sent meanwhile (a lease that ran out) still counts as a duplicate.
  const runs = await settle(nodes[0], token, mode, n);
  await sleep(cfg.grace * 1000); // a duplicate that would come arrives before counting
  const dump = (await http(upUrl, 'GET', '/__dump', { timeoutMs: 60_000 })).json;
  const result = analyse(mode, plan, dump);

  const memory = rss.stop();
  await Promise.all([...nodes.map((nd) => nd.proc), up].map((p) => stopGroup(p))); // all at once: no node takes over another's calls
  const cpu = cpuDiff(cpuA, cpuB);
  if (dbName) await dropDatabase(dbName);
  const logs = nodes.map(scanLog);
  return {
    scenario, mode, schedules: n, nodes: nodes.map((nd) => nd.name), database: sc.db,
    due: { first: iso(plan.T), last: iso(lastDue) },
    creation: { seconds: round1(plan.seconds), perS: Math.round(n / plan.seconds), calibrationPerS: plan.calibrationRate && Math.round(plan.calibrationRate), headroomS, retried: plan.errors },
    ...result,
    rss: { peakMb: nodes.map((_, i) => Math.round(Math.max(memory.peak[i].rss, memory.peak[i].hwm))), sampledPeakMb: memory.peak.map((p) => Math.round(p.rss)), readyMb: memory.marks.ready, afterCreateMb: memory.marks.created, afterFiringMb: memory.marks.fired },
    cpu: { windowS: round1(cpu.seconds), gatewaySeconds: nodes.map((nd) => round1(cpu.groups.get(nd.proc.pid))), upstreamSeconds: round1(cpu.groups.get(up.pid)), otherPctOfOneCore: cpu.otherPct },
    runs, exits: nodes.map((nd) => (nd.proc.killed ? 'killed' : nd.proc.code)), logs,
  };
}

// ---------------------------------------------------------------------------------------------- main
async function main() {
  if (cfg.scenarios.some((s) => SCENARIOS[s].db === 'postgres')) {
    try { await pgAdmin('select 1'); } catch (e) {
      die(`PostgreSQL is not reachable at ${cfg.pgUrl} (${e.code || e.message}): start it, set PG_URL, or run SCENARIOS=sqlite-1`);
    }
  }
  started = true; // from here on, errors stop what was started
  TMP = fs.mkdtempSync(path.join(env.BENCH_TMPDIR || os.tmpdir(), 'meerkat-scheduler-bench-'));
  const newest = (dir) => fs.readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
    const p = path.join(dir, e.name);
    return Math.max(m, e.isDirectory() ? newest(p) : e.name.endsWith('.ts') ? fs.statSync(p).mtimeMs : 0);
  }, 0);
  try { if (newest(path.join(GATEWAY_ROOT, 'src')) > fs.statSync(GATEWAY_CLI).mtimeMs) log('WARNING: some src/ file is newer than dist/: the bench runs the last build (npm run build to refresh it)'); } catch {}
  const meta = {
    date: new Date().toISOString(),
    host: { ncpu: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? '?', kernel: os.release(), node: process.version },
    gateway: gatewayBuild(),
    config: { ...cfg, outJson: undefined },
  };
  log(`${runsPlanned} run(s): ${cfg.scenarios.join(', ')} x ${cfg.modes.join(', ')}, ${cfg.schedules} schedules each; watchdog ${maxSeconds}s; temp ${TMP}`);
  log(`gateway: ${meta.gateway}`);
  const runs = [];
  const rateHints = {};
  const file = cfg.outJson || path.join(env.BENCH_TMPDIR || os.tmpdir(), `meerkat-scheduler-bench-${meta.date.replace(/[:.]/g, '-')}.json`);
  for (const scenario of cfg.scenarios) {
    for (const mode of cfg.modes) {
      const r = await runOne(scenario, mode, rateHints);
      runs.push(r);
      fs.writeFileSync(file, JSON.stringify({ ...meta, runs }, null, 2)); // after each run: a later failure keeps these
      for (const line of detail(r)) log(line);
      log(`  ${scenario} ${mode}: p50 ${fmtMs(r.lateness.p50)} p99 ${fmtMs(r.lateness.p99)} max ${fmtMs(r.lateness.max)} ms, ${r.callsPerS} calls/s, dups ${r.duplicates.total}, missing ${r.missing}, RSS ${r.rss.peakMb.join('/')} MB: ${verdict(r)}`);
    }
  }
  console.log(report(runs, meta));
  console.log(`results: ${file}`);
  if (flags.markdown) console.log(`\n${markdown(runs)}`);
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
