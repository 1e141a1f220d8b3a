// gateway.mjs - runs the compiled gateway (dist/src/cli.js) for a bench's start script, in the foreground.
//
// The gateway gets its data plane on host:port, the other planes on 127.0.0.1:0, a fresh temp data directory
// (SQLite), a random root password, GATEWAY_LOG_FORMAT=json and GATEWAY_LOG_LEVEL=info (the `listening` lines
// that give the real ports are info records; nothing is logged per request). No other GATEWAY_* variable of the
// caller's environment is passed on, only `gatewayEnv`. The start script's process exits with the gateway's code
// and removes the temp directory; SIGTERM / SIGINT / SIGHUP reach the gateway (forwarded when only the script
// was signalled). A certificate can be placed on the data plane (placeCertificate): its HTTPS door opens on
// host:tlsPort. The gateway's standard output (the access log) is this script's, or the file `stdoutFile` names
// (opened for writing: a FIFO blocks until its reader has opened it).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from './http.mjs';

/**
 * Starts the gateway and waits for its data and control planes to listen. Returns:
 *   data, control     plane origins (http://127.0.0.1:port)
 *   dataDir           the temp data directory (the SQLite file is meerkat.db in it)
 *   call(m, p, body, headers)  a control-plane call (JSON), throws on a status >= 300; returns { r, json }
 *   signIn()          root's session: { cookie: 'mk_session=…' }, headers for call()
 *   waitData(p, headers, init, { origin, tls })  until the data plane answers 200 at p (within the start timeout);
 *                     origin: another door of it (its HTTPS one), tls: { ca, servername } to verify that door
 *   placeCertificate(auth, { cert, key })  imports the PEM pair and places it on the data plane (planes: ['app']);
 *                     resolves to the origin of the HTTPS door that opens (https://host:tlsPort)
 *   abandon(msg)      stop the gateway after an error; the process exits 1 once it is gone
 *   ready()           configured: an exit from now on is not a failed start
 */
export async function startGateway({ repo, say, host = '127.0.0.1', port = 0, tlsPort = 0, gatewayEnv = {}, nodeArgs = [], startTimeoutMs = 30_000, stdoutFile = null, actorsCpu = null }) {
  const fail = (msg) => { say(`ERROR: ${msg}`); process.exit(1); };
  const cli = path.join(repo, 'dist', 'src', 'cli.js');
  if (!fs.existsSync(cli)) fail(`${path.relative(process.cwd(), cli) || cli} is missing: run npm run build first (cd ${repo} && npm run build)`);

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meerkat-bench-gw-'));
  const rootPassword = randomBytes(18).toString('base64url'); // 24 characters
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GATEWAY_'))); // nothing inherited: no DATABASE_URL, CONFIG, CLOCK...
  Object.assign(env, {
    GATEWAY_ADDR: `${host}:${port}`,
    GATEWAY_TLS_ADDR: `${host}:${tlsPort}`,
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
    ...gatewayEnv,
  });
  let stdout = 'inherit';
  if (stdoutFile) { try { stdout = fs.openSync(stdoutFile, 'w'); } catch (e) { fail(`cannot open ${stdoutFile} for the gateway's standard output: ${e.message}`); } }
  const child = spawn(process.execPath, [...nodeArgs, cli, 'start'], { cwd: repo, env, stdio: ['ignore', stdout, 'pipe'] });
  if (typeof stdout === 'number') fs.closeSync(stdout); // the gateway holds its own copy

  let exited = false;
  let isReady = false;
  let exitCode = null; // set when the script decided to stop the gateway because of an error
  let signalSeen = false; // the gateway logged "signal received"
  const listening = {}; // plane -> "host:port" of its plain door
  const listeningTls = {}; // plane -> "host:port" of its HTTPS door, once a certificate opened it
  const actorThreads = {}; // actor -> its worker's thread id (the gateway's "actor ready" lines)
  let waker = null;
  child.on('exit', (code, sig) => {
    exited = true;
    try { fs.rmSync(dataDir, { recursive: true, force: true }); } catch {}
    if (!isReady) say(`the gateway exited (${code ?? sig}) before it was ready`);
    process.exit(exitCode ?? code ?? (sig ? 128 + (os.constants.signals[sig] ?? 1) : 1));
  });
  const abandon = async (msg) => {
    say(`ERROR: ${msg}`);
    exitCode = 1;
    if (!exited) child.kill('SIGTERM');
    setTimeout(() => { if (!exited) child.kill('SIGKILL'); }, 5000);
    await new Promise(() => {}); // the exit handler ends this process
  };
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
      if (rec.msg === 'listening' && rec.plane && rec.address) { (rec.protocol === 'https' ? listeningTls : listening)[rec.plane] = rec.address; waker?.(); }
      if (rec.msg === 'signal received') signalSeen = true;
      if ((rec.msg === 'actor ready' || rec.msg === 'actor restarted') && rec.actor && Number.isInteger(rec.thread)) actorThreads[rec.actor] = rec.thread;
    }
  });

  // A bench stops the whole process group, so the gateway usually gets the signal itself; a second one would
  // make it exit without draining. Forward only when it did not log the signal within 300 ms (the script
  // alone was signalled, e.g. `kill <pid>`).
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(sig, () => {
      if (exited) return;
      setTimeout(() => {
        if (!exited && !signalSeen) { try { child.kill(sig === 'SIGHUP' ? 'SIGTERM' : sig); } catch {} }
      }, 300);
      // Last resort: the gateway did not stop (a bench would SIGKILL the group after 3 s anyway).
      setTimeout(() => { if (!exited) { try { child.kill('SIGKILL'); } catch {} } }, 10_000).unref();
    });
  }

  const deadline = Date.now() + startTimeoutMs;
  while (!(listening.data && listening.control)) {
    if (Date.now() > deadline) await abandon(`no "listening" lines from the gateway after ${startTimeoutMs / 1000}s`);
    await new Promise((r) => { waker = r; setTimeout(r, 100); });
    if (exited) await new Promise(() => {}); // the exit handler ends this process
  }
  const urlOf = (address, scheme = 'http') => `${scheme}://${address.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '[::1]:')}`;
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
  async function signIn() {
    const session = await call('POST', '/api/session', { name: 'root', password: rootPassword });
    const cookie = (session.r.headers.getSetCookie?.() ?? [session.r.headers.get('set-cookie') ?? ''])
      .map((c) => c.split(';')[0]).find((c) => c.startsWith('mk_session='));
    if (!cookie) throw new Error('POST /api/session: no mk_session cookie in the answer');
    return { cookie };
  }
  // A route reaches the data plane through a config snapshot: wait until it answers.
  async function waitData(p, headers, init = {}, { origin = data, tls } = {}) {
    let last = 'no answer';
    for (;;) {
      try {
        const r = await request(`${origin}${p}`, { ...init, headers, tls });
        if (r.status === 200) return;
        last = `HTTP ${r.status} ${r.body.slice(0, 200)}`;
      } catch (e) { last = e.cause?.code || e.code || e.message; }
      if (Date.now() > deadline) throw new Error(`${init.method ?? 'GET'} ${origin}${p} did not answer 200 (last: ${last})`);
      await sleep(100);
    }
  }
  // The placement opens the door (binding first): its `listening` line follows the answer.
  async function placeCertificate(auth, { cert, key }) {
    const created = (await call('POST', '/api/certificates', { source: 'import', cert, key }, auth)).json;
    if (!created?.id) throw new Error('POST /api/certificates: no id in the answer');
    await call('PUT', `/api/certificates/${created.id}/placement`, { planes: ['app'] }, auth);
    while (!listeningTls.data) {
      if (Date.now() > deadline) throw new Error('no "listening" line of the data plane\'s HTTPS door after the placement');
      await new Promise((r) => { waker = r; setTimeout(r, 100); });
    }
    return urlOf(listeningTls.data, 'https');
  }
  // The actors' threads on a core of their own, away from the data plane's (the main thread's): what a machine
  // with a core to spare for them gives. Everything else stays where the gateway was started.
  const placeActors = () => {
    if (actorsCpu === null) return;
    const names = Object.keys(actorThreads);
    if (names.length === 0) say('WARNING: BENCH_ACTORS_CPU is set but the gateway named no actor thread');
    for (const name of names) {
      const r = spawnSync('taskset', ['-p', '-c', String(actorsCpu), String(actorThreads[name])], { encoding: 'utf8' });
      if (r.status !== 0) say(`WARNING: taskset of the ${name} actor's thread ${actorThreads[name]}: ${(r.stderr || r.error?.message || '').trim()}`);
    }
    say(`the actors' threads (${names.map((n) => `${n} ${actorThreads[n]}`).join(', ')}) run on cpu ${actorsCpu}`);
  };
  return { data, control, dataDir, call, signIn, waitData, placeCertificate, abandon, ready: () => { isReady = true; placeActors(); } };
}

/**
 * The knobs every start script reads: BENCH_UPSTREAM (required), BENCH_HOST, BENCH_PORT, MEERKAT_NODE_ARGS,
 * MEERKAT_START_TIMEOUT, BENCH_STDOUT (a file for the gateway's standard output), BENCH_GATEWAY_ENV (a JSON
 * object of GATEWAY_* variables, e.g. {"GATEWAY_METRICS":"off"}), BENCH_ACTORS_CPU (a cpu for the actors' worker
 * threads, moved there once the gateway is configured; the main thread stays); and, for an HTTPS door, BENCH_TLS_CERT + BENCH_TLS_KEY (PEM files: the pair to place),
 * BENCH_TLS_PORT [0 = any], BENCH_TLS_CA (PEM file to verify the door with) and BENCH_TLS_NAME (the name to ask
 * for). tls is null without BENCH_TLS_CERT.
 */
export function startOptions(fail) {
  const upstreamRaw = process.env.BENCH_UPSTREAM;
  if (!upstreamRaw) fail('BENCH_UPSTREAM is not set (the upstream origin, e.g. http://127.0.0.1:8081/)');
  const port = Number(process.env.BENCH_PORT || 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`BENCH_PORT=${process.env.BENCH_PORT}: not a port`);
  const env = process.env;
  let tls = null;
  if (env.BENCH_TLS_CERT) {
    const read = (name) => { try { return fs.readFileSync(env[name], 'utf8'); } catch (e) { fail(`${name}=${env[name]}: ${e.message}`); } };
    if (!env.BENCH_TLS_KEY) fail('BENCH_TLS_CERT is set but not BENCH_TLS_KEY');
    tls = { cert: read('BENCH_TLS_CERT'), key: read('BENCH_TLS_KEY'), ca: env.BENCH_TLS_CA ? read('BENCH_TLS_CA') : undefined, servername: env.BENCH_TLS_NAME || undefined };
  }
  const actorsCpu = env.BENCH_ACTORS_CPU ? Number(env.BENCH_ACTORS_CPU) : null;
  if (actorsCpu !== null && !(Number.isInteger(actorsCpu) && actorsCpu >= 0)) fail(`BENCH_ACTORS_CPU=${env.BENCH_ACTORS_CPU}: not a cpu number`);
  const tlsPort = Number(env.BENCH_TLS_PORT || 0);
  if (!Number.isInteger(tlsPort) || tlsPort < 0 || tlsPort > 65535) fail(`BENCH_TLS_PORT=${env.BENCH_TLS_PORT}: not a port`);
  let gatewayEnv = {};
  if (env.BENCH_GATEWAY_ENV) {
    try { gatewayEnv = JSON.parse(env.BENCH_GATEWAY_ENV); } catch (e) { fail(`BENCH_GATEWAY_ENV: not JSON (${e.message})`); }
    for (const [k, v] of Object.entries(gatewayEnv)) if (!k.startsWith('GATEWAY_') || typeof v !== 'string') fail(`BENCH_GATEWAY_ENV: ${k} is not a GATEWAY_* variable with a string value`);
  }
  return {
    tls,
    tlsPort,
    gatewayEnv,
    stdoutFile: env.BENCH_STDOUT || null,
    actorsCpu,
    upstream: upstreamRaw.replace(/\/+$/, ''),
    host: process.env.BENCH_HOST || '127.0.0.1',
    port,
    startTimeoutMs: (Number(process.env.MEERKAT_START_TIMEOUT) || 120) * 1000,
    nodeArgs: (process.env.MEERKAT_NODE_ARGS || '').split(/\s+/).filter(Boolean),
  };
}
