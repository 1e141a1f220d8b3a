#!/usr/bin/env node
// run.mjs - HTTPS data-plane benchmark, run by hand (never part of the test suite). See bench/https/README.md.
//
// Makes a throwaway CA and two leaves for bench.example.test + 127.0.0.1 (ECDSA P-256, RSA 2048; bench/lib/tls.mjs),
// then starts, all on 127.0.0.1 with free ports:
//   upstream   nginx "return 200" (bench/proxy/upstream.conf.template), 1 worker, pinned on LOAD_CPU
//   nginx      one nginx, 1 worker, PROXY_CPU (nginx-https.conf.template): a plain door (`nginx`) and two TLS doors
//              (`nginx-tls` with the ECDSA leaf, `nginx-tls-rsa` with the RSA leaf), keep-alive pool to the upstream
//   meerkat    the gateway (bench/proxy/start-meerkat.mjs: protected route, personal token) with the ECDSA leaf placed
//              on its data plane: plain door (`meerkat`, uWS) and HTTPS door (`meerkat-tls`, node:https), PROXY_CPU
//   meerkat    a second gateway holding the RSA leaf (`meerkat-tls-rsa`), PROXY_CPU, when that target is measured
// and measures three loads one after the other, each with bench/lib/load.mjs (quiet box, warm-up, rotating rounds,
// DISTURBED runs repeated):
//   keepalive    wrk -t1 -c64: connections kept, one TLS 1.3 handshake per connection
//   post         the same, each request a POST with a 16 KiB body (the request body's path through each door)
//   close        + Connection: close: a TCP connection + TLS 1.3 handshake per request, resumed where the server lets
//                wrk's client (handshakes.mjs says which, per target)
//   close-full   the same with wrk's OpenSSL at TLS 1.2 without tickets (OPENSSL_CONF): a full handshake per request
// Prints medians per load, Meerkat/nginx ratios, the handshakes made, every run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPinning, commonConfig, helpFromReadme, NCPU, num } from '../lib/config.mjs';
import { benchHeaders, headerName, headerObject } from '../lib/headers.mjs';
import { measure } from '../lib/load.mjs';
import { begin, die, finish, freePorts, log, pkgVersion, preflight, render, start, TMP, version, waitHttp } from '../lib/procs.mjs';
import { startUpstream } from '../lib/upstream.mjs';
import { fmt, gatewayBuild, median, medians, perRunTable, staleBuild, table, warnings } from '../lib/report.mjs';
import { makeCertificates } from '../lib/tls.mjs';
import { probeHandshakes } from './handshakes.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const T0 = Date.now();
helpFromReadme(path.join(HERE, 'README.md'));

// ---------------------------------------------------------------------------------------------- config
const env = process.env;
const cfg = {
  ...commonConfig(),
  warmupAgain: num('WARMUP_AGAIN', 2),
  readyTimeout: num('MEERKAT_READY_TIMEOUT', 150, 1),
  probeConns: num('PROBE_CONNS', 9, 2),
};
const SERVERNAME = 'bench.example.test';
const CLOSE = ['nginx-tls', 'meerkat-tls', 'nginx-tls-rsa', 'meerkat-tls-rsa'];
const LOADS = {
  keepalive: { targets: ['nginx', 'meerkat', 'nginx-tls', 'meerkat-tls'], headers: [], title: 'connections kept (TLS doors: TLS 1.3, one handshake per connection)' },
  post: { targets: ['nginx', 'meerkat', 'nginx-tls', 'meerkat-tls'], headers: [], bodyBytes: 16 * 1024, title: 'POST with a 16 KiB body, connections kept (the request body\'s path)' },
  close: { targets: CLOSE, headers: ['Connection: close'], probe: 'tls13', title: 'a new connection per request, TLS 1.3 (req/s = handshakes/s; resumed as wrk\'s client can, see "handshakes")' },
  'close-full': { targets: CLOSE, headers: ['Connection: close'], probe: 'tls12-noticket', tls12: true, title: 'a new connection per request, TLS 1.2 without tickets (req/s = full handshakes/s)' },
};
const ALL = ['nginx', 'meerkat', 'nginx-tls', 'meerkat-tls', 'nginx-tls-rsa', 'meerkat-tls-rsa'];
const GATEWAY_CLI = path.join(REPO, 'dist', 'src', 'cli.js');
const loads = (env.LOADS || Object.keys(LOADS).join(',')).split(',').map((s) => s.trim()).filter(Boolean);
for (const l of loads) if (!(l in LOADS)) die(`LOADS: unknown load "${l}" (known: ${Object.keys(LOADS).join(', ')})`);
if (new Set(loads).size !== loads.length || !loads.length) die('LOADS: list each load once');
const wanted = (env.TARGETS || ALL.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
for (const t of wanted) if (!ALL.includes(t)) die(`TARGETS: unknown target "${t}" (known: ${ALL.join(', ')})`);
const plan = loads.map((l) => ({ load: l, names: LOADS[l].targets.filter((t) => wanted.includes(t)) })).filter((p) => p.names.length);
if (!plan.length) die('LOADS x TARGETS: nothing to measure');
const used = new Set(plan.flatMap((p) => p.names));
const needs = { meerkat: used.has('meerkat') || used.has('meerkat-tls'), rsaGateway: used.has('meerkat-tls-rsa') };
if ((needs.meerkat || needs.rsaGateway) && !fs.existsSync(GATEWAY_CLI)) die(`${path.relative(REPO, GATEWAY_CLI)} is missing: run npm run build first`);
checkPinning(cfg);
const isNode = (t) => t.startsWith('meerkat');
const runSlot = cfg.duration + cfg.cooldown + 3;
const runsPlanned = plan.reduce((s, p) => s + p.names.length, 0);
const maxSeconds = num('MAX_SECONDS', Math.ceil(90 + cfg.waitIdle * plan.length + cfg.readyTimeout
  + [...used].reduce((s, t) => s + (isNode(t) ? cfg.warmupNode : cfg.warmup), 0) + runsPlanned * (cfg.warmupAgain + cfg.cooldown + 3)
  + (cfg.rounds * runsPlanned + cfg.retries) * runSlot), 10);

begin(cfg, { tmpPrefix: 'meerkat-https-bench-', maxSeconds, cwd: REPO });

// ---------------------------------------------------------------------------------------------- main
const BASE = {}; // target -> { url, pgid, proc, headers }

async function main() {
  const wrkV = preflight(cfg);
  if (needs.meerkat && staleBuild(path.join(REPO, 'src'), GATEWAY_CLI)) log('WARNING: some src/ file is newer than dist/: meerkat runs the last build (npm run build to refresh it)');
  const certs = makeCertificates(path.join(TMP, 'certs'), { dns: [SERVERNAME], ips: ['127.0.0.1'] });
  const tlsCheck = { ca: certs.ca, servername: SERVERNAME };
  const [upPort, ngxPlain, ngxTls, ngxRsa, mkPort, mkTls, mkRsaPort, mkRsaTls] = await freePorts(8);
  const upstreamUrl = `http://127.0.0.1:${upPort}/`;

  const { upstreamProc, expected } = await startUpstream(cfg, REPO, upPort);

  if (['nginx', 'nginx-tls', 'nginx-tls-rsa'].some((t) => used.has(t))) {
    const { ecdsa, rsa } = certs.leaves;
    const conf = render(path.join(HERE, 'nginx-https.conf.template'), {
      PREFIX: TMP, UP_PORT: upPort, POOL: cfg.pool, PLAIN_PORT: ngxPlain, TLS_PORT: ngxTls, TLS_CERT: ecdsa.certFile, TLS_KEY: ecdsa.keyFile,
      RSA_PORT: ngxRsa, RSA_CERT: rsa.certFile, RSA_KEY: rsa.keyFile,
    });
    const p = start('nginx-https', cfg.nginxBin, ['-p', `${TMP}/`, '-e', `${TMP}/logs/nginx-https-error.log`, '-c', conf], { cpu: cfg.proxyCpu });
    BASE.nginx = { url: `http://127.0.0.1:${ngxPlain}/bench/`, pgid: p.pid, proc: p };
    BASE['nginx-tls'] = { url: `https://127.0.0.1:${ngxTls}/bench/`, pgid: p.pid, proc: p };
    BASE['nginx-tls-rsa'] = { url: `https://127.0.0.1:${ngxRsa}/bench/`, pgid: p.pid, proc: p };
  }
  // The gateways: bench/proxy/start-meerkat.mjs with a certificate to place on the data plane.
  const gateway = (name, port, tlsPort, leaf) => start(name, process.execPath, [path.join(REPO, 'bench', 'proxy', 'start-meerkat.mjs')], {
    cpu: cfg.proxyCpu,
    extraEnv: {
      BENCH_UPSTREAM: upstreamUrl, BENCH_PORT: String(port), BENCH_HOST: '127.0.0.1', BENCH_POOL: String(cfg.pool),
      BENCH_TLS_CERT: leaf.certFile, BENCH_TLS_KEY: leaf.keyFile, BENCH_TLS_PORT: String(tlsPort), BENCH_TLS_CA: certs.caFile, BENCH_TLS_NAME: SERVERNAME,
    },
  });
  if (needs.meerkat) {
    const p = gateway('meerkat', mkPort, mkTls, certs.leaves.ecdsa);
    BASE.meerkat = { url: `http://127.0.0.1:${mkPort}/bench/`, pgid: p.pid, proc: p };
    BASE['meerkat-tls'] = { url: `https://127.0.0.1:${mkTls}/bench/`, pgid: p.pid, proc: p };
  }
  if (needs.rsaGateway) {
    const p = gateway('meerkat-rsa', mkRsaPort, mkRsaTls, certs.leaves.rsa);
    BASE['meerkat-tls-rsa'] = { url: `https://127.0.0.1:${mkRsaTls}/bench/`, pgid: p.pid, proc: p };
  }

  // Ready: every door answers the upstream's body, through TLS verified against the bench's CA for SERVERNAME.
  for (const t of ALL.filter((x) => used.has(x))) {
    const B = BASE[t];
    const headers = isNode(t) ? () => (benchHeaders(B.proc).length ? headerObject(benchHeaders(B.proc)) : null) : {};
    const r = await waitHttp(t, B.proc, B.url, { timeoutS: isNode(t) ? cfg.readyTimeout : 10, headers, tls: B.url.startsWith('https:') ? tlsCheck : undefined });
    B.headers = isNode(t) ? benchHeaders(B.proc) : [];
    if (r.body !== expected) {
      if (isNode(t)) log(`WARNING: ${t} answered 200 with a body different from the upstream's: ${JSON.stringify(r.body.slice(0, 200))}`);
      else die(`${t}: body differs from the upstream's: ${JSON.stringify(r.body.slice(0, 200))}`);
    }
  }
  if (needs.meerkat || needs.rsaGateway) log(`meerkat: headers from the command: ${[...new Set(Object.values(BASE).flatMap((B) => B.headers ?? []).map(headerName))].join(', ')} (values not shown)`);
  log(`upstream ${upstreamUrl} | ${ALL.filter((t) => used.has(t)).map((t) => `${t} ${BASE[t].url}`).join(' | ')}`);
  log(cfg.pin ? `pinning: proxies on cpu ${cfg.proxyCpu}; upstream + wrk on cpu ${cfg.loadCpu}` : 'pinning: off');

  // What a connection-per-request load makes of each TLS door (before any load: nothing else is running).
  const probes = [];
  for (const { load, names } of plan) {
    if (!LOADS[load].probe) continue;
    for (const t of names) {
      const r = await probeHandshakes(BASE[t].url, { ...tlsCheck, mode: LOADS[load].probe, headers: BASE[t].headers, n: cfg.probeConns });
      probes.push({ load, target: t, ...r });
      if (!/^HTTP\/1\.1 200 /.test(r.status)) log(`WARNING: handshakes ${load} ${t}: the first answer was "${r.status}", not 200`);
      log(`handshakes ${load} ${t}: ${r.negotiated}; ${r.kinds.join(', ')}`);
    }
  }

  // wrk's client at TLS 1.2 without the ticket extension: no resumption but a session id the servers do not keep.
  const tls12Conf = path.join(TMP, 'conf', 'wrk-tls12-noticket.cnf');
  fs.writeFileSync(tls12Conf, 'openssl_conf = bench_conf\n[bench_conf]\nssl_conf = bench_ssl\n[bench_ssl]\nsystem_default = bench_tls\n'
    + '[bench_tls]\nMaxProtocol = TLSv1.2\nOptions = -SessionTicket\n');
  const warmed = new Set();
  const warmOf = (t) => {
    if (warmed.has(t)) return cfg.warmupAgain;
    warmed.add(t);
    return isNode(t) ? cfg.warmupNode : cfg.warmup;
  };
  const runs = [];
  const med = {};
  for (const { load, names } of plan) {
    const L = LOADS[load];
    log(`load ${load}: ${L.title}`);
    // A load with a body posts it with a wrk script.
    const wrkArgs = [];
    if (L.bodyBytes) {
      const lua = path.join(TMP, `post-${load}.lua`);
      fs.writeFileSync(lua, `wrk.method = "POST"\nwrk.body = string.rep("b", ${L.bodyBytes})\nwrk.headers["Content-Type"] = "application/octet-stream"\n`);
      wrkArgs.push('-s', lua);
    }
    const TGT = Object.fromEntries(names.map((t) => [t, {
      name: t, url: BASE[t].url, pgid: BASE[t].pgid, headers: [...BASE[t].headers, ...L.headers],
      wrkEnv: L.tls12 ? { OPENSSL_CONF: tls12Conf } : {}, wrkArgs,
    }]));
    const rs = await measure(cfg, names, TGT, { warmOf, upstreamPgid: upstreamProc.pid, maxSeconds, runSlot });
    med[load] = medians(rs, names);
    runs.push(...rs.map((r) => ({ ...r, load })));
  }
  report(runs, med, probes, { wrkV, expected, certs });
}

// ---------------------------------------------------------------------------------------------- report
// Meerkat against nginx, and each against its own plain door (keep-alive only).
const PAIRS = [
  ['meerkat-tls', 'nginx-tls'], ['meerkat-tls-rsa', 'nginx-tls-rsa'], ['meerkat', 'nginx'],
  ['nginx-tls', 'nginx'], ['meerkat-tls', 'meerkat'], ['nginx-tls-rsa', 'nginx-tls'], ['meerkat-tls-rsa', 'meerkat-tls'],
];

// What held the throughput back (median busy share of each core): the proxy core, or wrk + upstream on the load
// core (then req/s understates the proxy and cpu_us/req is the figure to compare).
function limitOf(rs) {
  const p = median(rs.map((r) => r.cpu?.proxyCore ?? NaN)), l = median(rs.map((r) => r.cpu?.loadCore ?? NaN));
  if (!Number.isFinite(p)) return '?';
  return p >= 90 ? 'proxy' : l >= 95 ? 'load core' : '-';
}

function report(runs, med, probes, { wrkV, expected, certs }) {
  const cpuModel = os.cpus()[0]?.model ?? '?';
  const ngxV = version(cfg.nginxBin, ['-V'], /nginx version: nginx\/(\S+)/);
  const ngxBuilt = version(cfg.nginxBin, ['-V'], /built with (OpenSSL \S+)/);
  const ngxRunning = version(cfg.nginxBin, ['-V'], /running with (OpenSSL \S+)/);
  const ngxSsl = ngxRunning && ngxRunning !== '?' ? `built with ${ngxBuilt}, running with ${ngxRunning}` : `${ngxBuilt}`;
  const out = [];
  out.push(`https bench ${new Date().toISOString()}  ${NCPU} CPU (${cpuModel}), kernel ${os.release()}`);
  out.push(`versions: nginx ${ngxV} (${ngxSsl}), wrk ${wrkV} (${version('openssl', ['version'], /^(OpenSSL \S+)/)}), node ${process.version} (OpenSSL ${process.versions.openssl}), undici ${pkgVersion(REPO, 'undici')}, uws-pack ${pkgVersion(REPO, 'uWebSockets.js')}`);
  out.push(`load: wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s --latency, ${cfg.rounds} round(s), warm-up ${cfg.warmup}s (node targets ${cfg.warmupNode}s; ${cfg.warmupAgain}s when seen in an earlier load); `
    + (cfg.pin ? `proxy on cpu ${cfg.proxyCpu}, upstream + wrk on cpu ${cfg.loadCpu}` : 'no pinning'));
  out.push(`certificates: ${Object.values(certs.leaves).map((l) => l.label).join(' and ')} leaves for ${SERVERNAME} + 127.0.0.1, signed by a throwaway CA; the same files for nginx and meerkat`);
  if (BASE.meerkat || BASE['meerkat-tls-rsa']) out.push(`meerkat: bench/proxy/start-meerkat.mjs with the leaf placed on the data plane (${gatewayBuild(REPO, GATEWAY_CLI)})`);
  out.push(`upstream: nginx return 200, ${Buffer.byteLength(expected)}-byte JSON; proxies: 1 process / 1 nginx worker, ${cfg.pool} upstream keep-alive connections`);
  for (const { load, names } of plan) {
    const m = med[load];
    out.push('');
    out.push(`== ${load}: ${LOADS[load].title}; median over ${cfg.rounds} round(s) ==`);
    out.push(table(['target', 'req/s', 'p50_ms', 'p90_ms', 'p99_ms', 'proxy_cpu%', 'cpu_us/req', 'errors', 'disturbed', 'limit'],
      names.map((t) => [t, fmt(m[t].rps, 0), fmt(m[t].p50, 3), fmt(m[t].p90, 3), fmt(m[t].p99, 3), fmt(m[t].proxyCpu, 0),
        fmt((m[t].proxyCpu * 1e4) / m[t].rps, 1), m[t].errors, `${m[t].noisy}/${cfg.rounds}`, limitOf(runs.filter((r) => r.load === load && r.target === t))])));
  }
  const ratioRows = [];
  for (const { load, names } of plan) {
    for (const [a, b] of PAIRS) {
      if (!names.includes(a) || !names.includes(b)) continue;
      const A = med[load][a], B = med[load][b];
      ratioRows.push([load, `${a} / ${b}`, fmt(A.rps / B.rps), fmt(A.p50 / B.p50), fmt(A.p99 / B.p99), fmt((A.proxyCpu / A.rps) / (B.proxyCpu / B.rps))]);
    }
  }
  if (ratioRows.length) {
    out.push('');
    out.push('== ratios of the medians (req/s: higher is better; latency and CPU per request: lower is better) ==');
    out.push(table(['load', 'pair', 'rps', 'p50', 'p99', 'cpu/req'], ratioRows));
  }
  if (probes.length) {
    out.push('');
    out.push(`== handshakes: ${cfg.probeConns} connections in a row per TLS door, with wrk's client rules (handshakes.mjs) ==`);
    out.push(table(['load', 'target', 'negotiated', 'resumed', 'connections'],
      probes.map((p) => [p.load, p.target, p.negotiated, `${p.resumed}/${cfg.probeConns - 1}`, p.kinds.join(', ')])));
  }
  out.push('');
  out.push('== per run: cpu in % of one core over the steady part of the run (pcore/lcore = busy share of the proxy / load core;');
  out.push('   proxy/upstream/wrk = those processes; other = processes this script did not start; +-10% accounting noise) ==');
  out.push(perRunTable(runs.map((r) => ({ ...r, target: `${r.load} ${r.target}` }))));
  out.push('');
  out.push(...warnings(runs, cfg));
  out.push(`elapsed ${Math.round((Date.now() - T0) / 1000)}s`);
  console.log(out.join('\n'));

  const json = { date: new Date().toISOString(), host: { ncpu: NCPU, cpuModel, kernel: os.release() }, config: { ...cfg, loads, targets: wanted }, medians: med, probes, runs };
  fs.writeFileSync(path.join(TMP, 'results.json'), JSON.stringify(json, null, 2));
  if (cfg.outJson) { fs.writeFileSync(cfg.outJson, JSON.stringify(json, null, 2)); log(`results written to ${cfg.outJson}`); }
}

finish(main);
