// config.mjs - the knobs every wrk-driven data-plane bench shares (bench/proxy, bench/audit), read from the
// environment once. Each bench documents them in its README's "## Knobs" section, which --help prints.
import fs from 'node:fs';
import os from 'node:os';
import { die, log } from './procs.mjs';

export const NCPU = os.cpus().length;

/** --help / -h: print the README's "## Knobs" section and exit. */
export function helpFromReadme(readmePath) {
  if (!process.argv.includes('--help') && !process.argv.includes('-h')) return;
  const readme = fs.readFileSync(readmePath, 'utf8');
  const knobs = readme.match(/## Knobs[\s\S]*?(?=\n## )/);
  console.log(knobs ? knobs[0] : `see ${readmePath}`);
  process.exit(0);
}

/** A numeric knob: the default when unset or empty; a bad value stops the bench (exit 2) naming it. */
export function num(name, def, min = 0) {
  const v = process.env[name];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) die(`${name}=${v}: expected a number >= ${min}`);
  return n;
}

/** Load, pinning, quiet-box and output knobs; `defaults` overrides a default (e.g. { duration: 10 }). */
export function commonConfig(defaults = {}) {
  const env = process.env;
  const d = { rounds: 3, duration: 10, warmup: 3, warmupNode: 5, conns: 64, threads: 1, pool: 64, cooldown: 1, waitIdle: 15, retries: 2, noisyPct: 10, ...defaults };
  const cfg = {
    rounds: num('ROUNDS', d.rounds, 1),
    duration: num('DURATION', d.duration, 1),
    warmup: num('WARMUP', d.warmup),
    warmupNode: num('WARMUP_NODE', d.warmupNode),
    conns: num('CONNS', d.conns, 1),
    threads: num('THREADS', d.threads, 1),
    pool: num('POOL', d.pool, 1),
    cooldown: num('COOLDOWN', d.cooldown),
    pin: env.PIN !== '0',
    proxyCpu: num('PROXY_CPU', 0),
    loadCpu: num('LOAD_CPU', 1),
    waitIdle: num('WAIT_IDLE', d.waitIdle),
    retries: num('RETRIES', d.retries),
    noisyPct: num('NOISY_PCT', d.noisyPct),
    keepTmp: env.KEEP_TMP === '1',
    outJson: env.OUT_JSON || '',
    nginxBin: env.NGINX_BIN || ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find((p) => fs.existsSync(p)) || 'nginx',
    wrkBin: env.WRK_BIN || 'wrk',
  };
  if (cfg.conns < cfg.threads) die('CONNS must be >= THREADS');
  return cfg;
}

/** Pinning needs two distinct CPUs; on a 1-CPU box it is switched off (with a note). */
export function checkPinning(cfg) {
  if (cfg.pin && NCPU < 2) { log(`only ${NCPU} CPU: pinning disabled`); cfg.pin = false; }
  if (cfg.pin && (cfg.proxyCpu >= NCPU || cfg.loadCpu >= NCPU || cfg.proxyCpu === cfg.loadCpu)) die(`PROXY_CPU/LOAD_CPU must be two different CPUs < ${NCPU}`);
}

/** TARGETS (a comma list of names out of `known`), or `defaults`; each once, at least one. */
export function targetList(known, defaults) {
  const targets = (process.env.TARGETS || defaults.join(',')).split(',').map((s) => s.trim()).filter(Boolean);
  for (const t of targets) if (!known.includes(t)) die(`TARGETS: unknown target "${t}" (known: ${known.join(', ')})`);
  if (new Set(targets).size !== targets.length || !targets.length) die('TARGETS: list each target once');
  return targets;
}
