#!/usr/bin/env node
// start-meerkat.mjs - runs the compiled gateway for the proxy benchmark (the `meerkat` target of run.mjs).
// See bench/proxy/README.md, "Meerkat".
//
// Stays in the foreground (the harness stops its whole process group):
//   1. spawns `node dist/src/cli.js start` of this checkout with its data plane on $BENCH_HOST:$BENCH_PORT,
//      the other planes on 127.0.0.1:0, a fresh temp data directory (SQLite) and a random root password;
//   2. waits for the gateway's `listening` log lines (JSON log on stderr, echoed to this stderr);
//   3. configures through the control plane: role `staff`, route `bench` (/bench -> $BENCH_UPSTREAM,
//      rule roles [staff], identity headers), account `bench` holding staff, a personal token for it;
//   4. checks GET /bench/ with the token answers 200, then prints on stdout ONE line
//        BENCH_HEADER Authorization: Bearer <token>
//      which run.mjs adds to the headers of wrk and of its readiness GET;
//   5. forwards SIGTERM / SIGINT / SIGHUP to the gateway, exits with the gateway's code and removes its temp dir.
//
// Env: BENCH_UPSTREAM (required, origin, trailing slash allowed), BENCH_PORT [0 = any], BENCH_HOST [127.0.0.1],
//      BENCH_POOL (informational: the gateway sizes its own upstream pool),
//      MEERKAT_NODE_ARGS [none]: extra node flags for the gateway, space-separated
//        (e.g. '--cpu-prof --cpu-prof-dir=/tmp/meerkat-prof'),
//      MEERKAT_START_TIMEOUT [30]: seconds for the gateway to listen and be configured.
// Usable by hand too: BENCH_UPSTREAM=http://127.0.0.1:8081 BENCH_PORT=8080 node bench/proxy/start-meerkat.mjs
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const CLI = path.join(REPO, 'dist', 'src', 'cli.js');
const say = (msg) => process.stderr.write(`start-meerkat: ${msg}\n`);
const fail = (msg, code = 1) => { say(`ERROR: ${msg}`); process.exit(code); };

if (!fs.existsSync(CLI)) fail(`${path.relative(process.cwd(), CLI) || CLI} is missing: run npm run build first (cd ${REPO} && npm run build)`);
const upstreamRaw = process.env.BENCH_UPSTREAM;
if (!upstreamRaw) fail('BENCH_UPSTREAM is not set (the upstream origin, e.g. http://127.0.0.1:8081/)');
const upstream = upstreamRaw.replace(/\/+$/, '');
const host = process.env.BENCH_HOST || '127.0.0.1';
const port = Number(process.env.BENCH_PORT || 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`BENCH_PORT=${process.env.BENCH_PORT}: not a port`);
const startTimeoutMs = (Number(process.env.MEERKAT_START_TIMEOUT) || 30) * 1000;
const nodeArgs = (process.env.MEERKAT_NODE_ARGS || '').split(/\s+/).filter(Boolean);

// ---------------------------------------------------------------------------------------------- the gateway
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meerkat-bench-gw-'));
const rootPassword = randomBytes(18).toString('base64url'); // 24 characters
const gwEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEWAY_'))); // nothing inherited: no DATABASE_URL, CONFIG, CLOCK...
Object.assign(gwEnv, {
  GATEWAY_ADDR: `${host}:${port}`,
  GATEWAY_TLS_ADDR: '127.0.0.1:0',
  GATEWAY_ADMIN_ADDR: '127.0.0.1:0',
  GATEWAY_ADMIN_TLS_ADDR: '127.0.0.1:0',
  GATEWAY_INTERNAL_ADDR: '127.0.0.1:0',
  GATEWAY_INTERNAL_TLS_ADDR: '127.0.0.1:0',
  GATEWAY_DATA_DIR: dataDir,
  GATEWAY_ROOT_PASSWORD: rootPassword,
  // info, not warn: the `listening` lines (the real ports) are info records. The gateway logs nothing per
  // request at info, so this costs nothing under load.
  GATEWAY_LOG_LEVEL: 'info',
  GATEWAY_LOG_FORMAT: 'json',
  GATEWAY_DRAIN_TIMEOUT: '2',
});
const child = spawn(process.execPath, [...nodeArgs, CLI, 'start'], { cwd: REPO, env: gwEnv, stdio: ['ignore', 'inherit', 'pipe'] });

let exited = false;
let ready = false; // configured, BENCH_HEADER printed
let exitCode = null; // set when this script decided to stop the gateway because of an error
let signalSeen = false; // the gateway logged "signal received"
const listening = {}; // plane -> "host:port"
let waker = null;
child.on('exit', (code, sig) => {
  exited = true;
  try { fs.rmSync(dataDir, { recursive: true, force: true }); } catch {}
  if (!ready) say(`the gateway exited (${code ?? sig}) before it was ready`);
  process.exit(exitCode ?? code ?? (sig ? 128 + (os.constants.signals[sig] ?? 1) : 1));
});
// Stops the gateway after an error and exits 1 once it is gone (the exit handler removes the temp dir).
async function abandon(msg) {
  say(`ERROR: ${msg}`);
  exitCode = 1;
  if (!exited) child.kill('SIGTERM');
  setTimeout(() => { if (!exited) child.kill('SIGKILL'); }, 5000);
  await new Promise(() => {}); // the exit handler ends this process
}
child.on('error', (e) => { try { fs.rmSync(dataDir, { recursive: true, force: true }); } catch {} fail(`cannot start the gateway: ${e.message}`); });

let buf = '';
child.stderr.setEncoding('utf8');
child.stderr.on('data', (chunk) => {
  process.stderr.write(chunk);
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line.startsWith('{')) continue;
    let rec;
    try { rec = JSON.parse(line); } catch { continue; }
    if (rec.msg === 'listening' && rec.plane && rec.address) { listening[rec.plane] = rec.address; waker?.(); }
    if (rec.msg === 'signal received') signalSeen = true;
  }
});

// The harness stops the whole process group, so the gateway usually gets the signal itself; a second one
// would make it exit without draining. Forward only when it did not log the signal within 300 ms (the
// wrapper alone was signalled, e.g. `kill <pid>`).
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => {
    if (exited) return;
    setTimeout(() => {
      if (!exited && !signalSeen) { try { child.kill(sig === 'SIGHUP' ? 'SIGTERM' : sig); } catch {} }
    }, 300);
    // Last resort: the gateway did not stop (the harness would SIGKILL the group after 3 s anyway).
    setTimeout(() => { if (!exited) { try { child.kill('SIGKILL'); } catch {} } }, 10_000).unref();
  });
}

// ---------------------------------------------------------------------------------------------- configure
const deadline = Date.now() + startTimeoutMs;
while (!(listening.data && listening.control)) {
  if (Date.now() > deadline) await abandon(`no "listening" lines from the gateway after ${startTimeoutMs / 1000}s`);
  await new Promise((r) => { waker = r; setTimeout(r, 100); });
  if (exited) await new Promise(() => {}); // the exit handler ends this process
}
const urlOf = (address) => `http://${address.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '[::1]:')}`;
const control = urlOf(listening.control);
const data = urlOf(listening.data);

async function call(method, p, body, headers = {}) {
  const r = await fetch(`${control}${p}`, {
    method,
    headers: { origin: control, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${p}: HTTP ${r.status} ${text.slice(0, 300)}`);
  return { r, json: text ? JSON.parse(text) : undefined };
}

let token;
try {
  const session = await call('POST', '/api/session', { name: 'root', password: rootPassword });
  const cookie = (session.r.headers.getSetCookie?.() ?? [session.r.headers.get('set-cookie') ?? ''])
    .map((c) => c.split(';')[0]).find((c) => c.startsWith('mk_session='));
  if (!cookie) throw new Error('POST /api/session: no mk_session cookie in the answer');
  const auth = { cookie };
  await call('PUT', '/api/roles/staff', {}, auth);
  await call('PUT', '/api/routes/bench', { upstream, paths: ['/bench'], rule: { roles: ['staff'] }, identity: 'headers' }, auth);
  await call('POST', '/api/accounts', { name: 'bench', password: 'bench-password-1', roles: ['staff'] }, auth);
  token = (await call('POST', '/api/tokens', { name: 'bench', kind: 'personal', account: 'bench' }, auth)).json?.token;
  if (!token) throw new Error('POST /api/tokens: no token in the answer');

  // The route reaches the data plane through a config snapshot: wait until it answers.
  let last = 'no answer';
  for (;;) {
    try {
      const r = await fetch(`${data}/bench/`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(2000) });
      const text = await r.text();
      if (r.status === 200) break;
      last = `HTTP ${r.status} ${text.slice(0, 200)}`;
    } catch (e) { last = e.cause?.code || e.message; }
    if (Date.now() > deadline) throw new Error(`GET ${data}/bench/ with the token did not answer 200 (last: ${last})`);
    await sleep(100);
  }
} catch (e) {
  await abandon(`configuring the gateway failed: ${e.message}`);
}
ready = true;
say(`ready: data plane ${data} (route /bench -> ${upstream}, roles [staff], identity headers), control plane ${control}, data dir ${dataDir}`);
process.stdout.write(`BENCH_HEADER Authorization: Bearer ${token}\n`);
