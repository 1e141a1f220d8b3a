// procs.mjs - the processes a data-plane bench starts, and how they are stopped.
//
// Every process leads its own process group (detached => setsid) and is stopped by that group id: on normal
// exit, on error, on Ctrl-C / SIGTERM / SIGHUP and when the watchdog fires (TERM, then KILL after 3 s). One
// bench per node process: the state below is the bench's.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from './http.mjs';

const T0 = Date.now();
export const elapsedS = () => Math.round((Date.now() - T0) / 1000);
export const log = (msg) => process.stderr.write(`[${String(elapsedS()).padStart(4)}s] ${msg}\n`);
export class Fatal extends Error {}

let started = false; // before any process is started, errors just print and exit 2
let cfg = { pin: false, keepTmp: false };
let failed = false;
let cleaning = null;
let defaultCwd = process.cwd();
/** The bench's temp directory (configs, logs, raw wrk outputs, results.json); set by begin(). */
export let TMP = '';
/** { name, pid, child, exited, code, logFile }: each one leads its own process group. */
export const procs = [];

export function die(msg) {
  if (!started) { log(`ERROR: ${msg}`); process.exit(2); }
  throw new Fatal(msg);
}

/**
 * From here on errors are thrown (and everything started is stopped): makes the temp directory, installs the
 * signal handlers and the watchdog (exit 124 after maxSeconds); processes start in `cwd` unless told otherwise.
 */
export function begin(config, { tmpPrefix, maxSeconds, cwd = process.cwd() }) {
  cfg = config;
  defaultCwd = cwd;
  started = true;
  TMP = fs.mkdtempSync(path.join(process.env.BENCH_TMPDIR || os.tmpdir(), tmpPrefix));
  fs.chmodSync(TMP, 0o711); // nginx workers (user nobody) must traverse into their temp dirs
  for (const d of ['logs', 'tmp', 'conf', 'wrk']) fs.mkdirSync(path.join(TMP, d));
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
  return TMP;
}

/** Runs main(), then stops everything; exit 0, or 1 with the error (temp files kept). */
export function finish(main) {
  main().then(
    async () => { await cleanup(); process.exit(0); },
    async (e) => {
      failed = true;
      log(e instanceof Fatal ? `ERROR: ${e.message}` : `ERROR: ${e.stack || e}`);
      await cleanup();
      process.exit(1);
    },
  );
}

/** Starts a process in its own group, output to TMP/logs/<name>.log; pinned on `cpu` when pinning is on. */
export function start(name, cmd, args, { cpu = null, extraEnv = {}, cwd = defaultCwd } = {}) {
  const argv = cfg.pin && cpu !== null ? ['taskset', '-c', String(cpu), cmd, ...args] : [cmd, ...args];
  const logFile = path.join(TMP, 'logs', `${name}.log`);
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', fd, fd], cwd, env: { ...process.env, ...extraEnv } });
  fs.closeSync(fd);
  const p = { name, pid: child.pid, child, exited: false, code: null, logFile };
  if (!child.pid) die(`cannot start ${name}: ${argv.join(' ')}`);
  child.on('exit', (code, sig) => { p.exited = true; p.code = code ?? sig; });
  child.on('error', (e) => { p.exited = true; p.code = e.message; });
  procs.push(p);
  return p;
}
/** Forgets a process that ended (a wrk run), so it is no longer sampled or stopped. */
export function forget(p) {
  const i = procs.indexOf(p);
  if (i >= 0) procs.splice(i, 1);
}
export const groupAlive = (pgid) => { try { process.kill(-pgid, 0); return true; } catch { return false; } };
export async function stopGroup(p, graceMs = 3000) {
  if (!groupAlive(p.pid)) return;
  try { process.kill(-p.pid, 'SIGTERM'); } catch {}
  for (let t = 0; t < graceMs && groupAlive(p.pid); t += 50) await sleep(50);
  if (groupAlive(p.pid)) { try { process.kill(-p.pid, 'SIGKILL'); } catch {} }
  for (let t = 0; t < 2000 && groupAlive(p.pid); t += 50) await sleep(50);
}
export function cleanup() {
  cleaning ??= (async () => {
    for (const p of [...procs].reverse()) await stopGroup(p);
    const left = procs.filter((p) => groupAlive(p.pid));
    if (left.length) log(`WARNING: still running: ${left.map((p) => `${p.name} (pgid ${p.pid})`).join(', ')}`);
    if (!TMP) return;
    if (cfg.keepTmp || failed) log(`temp files kept in ${TMP}`);
    else fs.rmSync(TMP, { recursive: true, force: true });
  })();
  return cleaning;
}

// ---------------------------------------------------------------------------------------------- helpers
export async function freePorts(n) {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(s));
  })));
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}
/** Fills the {{NAME}} placeholders of a template into TMP/conf/<name without .template>. */
export function render(tplPath, vars) {
  const tpl = path.basename(tplPath);
  const text = fs.readFileSync(tplPath, 'utf8').replace(/\{\{(\w+)\}\}/g, (m, k) => {
    if (!(k in vars)) die(`${tpl}: unknown placeholder ${m}`);
    return String(vars[k]);
  });
  const out = path.join(TMP, 'conf', tpl.replace(/\.template$/, ''));
  fs.writeFileSync(out, text);
  return out;
}
export const tail = (file, n = 15) => { try { return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n'); } catch { return ''; } };
/** Traffic goes only to this machine (https: only where the bench says so). */
export function assertLoopback(url, what, { https = false } = {}) {
  let u;
  try { u = new URL(url); } catch { die(`${what}: not a URL: ${url}`); }
  const schemes = https ? ['http:', 'https:'] : ['http:'];
  if (!schemes.includes(u.protocol) || !['127.0.0.1', 'localhost'].includes(u.hostname)) die(`${what}: only ${schemes.map((s) => `${s}//127.0.0.1`).join(' or ')} is allowed (got ${url})`);
  return u;
}
// GET url until it answers 200 (or the process dies / time runs out); returns { status, body }.
// headers: an object, or a function returning one, called before every attempt (headers a command prints late;
// null = not ready to ask yet). init: other request options (method, body). tls: { ca, servername } for https:
// URLs (bench/lib/http.mjs: the certificate presented is verified).
export async function waitHttp(name, proc, url, { timeoutS = 10, headers = {}, init = {}, tls } = {}) {
  const until = Date.now() + timeoutS * 1000;
  let last = 'no answer';
  while (Date.now() < until) {
    if (proc && proc.exited) die(`${name} exited (${proc.code}) before it answered. Log:\n${tail(proc.logFile)}`);
    const h = typeof headers === 'function' ? headers() : headers;
    if (h === null) { await sleep(100); continue; }
    try {
      const r = await request(url, { ...init, headers: { ...init.headers, ...h }, tls });
      if (r.status === 200) return r;
      last = `HTTP ${r.status}: ${r.body.slice(0, 200)}`;
    } catch (e) { last = e.cause?.code || e.code || e.message; }
    await sleep(100);
  }
  die(`${name} not ready at ${url} after ${timeoutS}s (last: ${last})${proc ? `. Log:\n${tail(proc.logFile)}` : ''}`);
}
/** Waits for a line matching re in the process's log; returns the match. */
export async function waitLine(proc, re, timeoutS = 10) {
  const until = Date.now() + timeoutS * 1000;
  while (Date.now() < until) {
    const m = (fs.existsSync(proc.logFile) ? fs.readFileSync(proc.logFile, 'utf8') : '').match(re);
    if (m) return m;
    if (proc.exited) break;
    await sleep(50);
  }
  die(`${proc.name} did not start (${proc.exited ? `exited ${proc.code}` : 'timeout'}). Log:\n${tail(proc.logFile)}`);
}
/** version(cmd, args, re): first match of re in the command's stdout+stderr; null if the command cannot run. */
export const version = (cmd, args, re) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 5000 });
  return r.error ? null : (`${r.stdout}${r.stderr}`.match(re)?.[1] ?? '?');
};
export const pkgVersion = (repo, name) => { try { return JSON.parse(fs.readFileSync(path.join(repo, 'node_modules', name, 'package.json'), 'utf8')).version; } catch { return '?'; } };
/** nginx, wrk and (when pinning) taskset must be there; returns the wrk version. */
export function preflight(cfg) {
  if (!version(cfg.nginxBin, ['-v'], /nginx\/(\S+)/)) die(`nginx not found (${cfg.nginxBin}): apt-get install -y nginx, or set NGINX_BIN`);
  const wrkV = version(cfg.wrkBin, ['-v'], /wrk (\S+)/);
  if (!wrkV) die(`wrk not found (${cfg.wrkBin}): apt-get install -y wrk, or set WRK_BIN`);
  if (cfg.pin && !version('taskset', ['-V'], /(\d[\d.]*)/)) die('taskset not found (util-linux); or run with PIN=0');
  return wrkV;
}
