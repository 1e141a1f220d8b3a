// load.mjs - drives wrk at the targets of a data-plane bench and watches the box while it does.
//
// Each run is `wrk -tT -cC -dD --latency` pinned on the load core. During its steady part (t+1 s to t+D-1 s)
// /proc is sampled for the CPU of the target, the upstream, wrk, everyone else ("other") and hypervisor steal;
// a run where others or steal take >= NOISY_PCT % of a core is DISTURBED and repeated (RETRIES in total).
// Targets alternate within a round and the order rotates each round, so slow drift spreads across targets.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { die, elapsedS, forget, log, procs, start, TMP } from './procs.mjs';
import { fmt } from './report.mjs';

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
/** CPU seconds used so far by the processes of one group (all threads, children that are still running). */
export const cpuSeconds = (pgid) => (groupTicks([pgid]).get(pgid) ?? 0) / CLK_TCK;
/** A sample of the cores and of the groups `pgids` (default: every process the bench runs). */
export const snap = (pgids = procs.map((p) => p.pid)) => ({ t: process.hrtime.bigint(), cores: cores(), groups: groupTicks(pgids) });
// % of one core over the window between two snaps; cfg gives the pinned cores.
export function cpuDiff(cfg, a, b, { proxy, upstream, wrk }) {
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
    // wrk --latency prints no p95: a Lua script's done() may (bench/observe), as `P95_US <microseconds>`.
    p95: Number(text.match(/^P95_US (\d+(?:\.\d+)?)$/m)?.[1] ?? NaN) / 1000,
    sockErrors: se ? se.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    non2xx: Number(text.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0),
    recorded: recordedLatencies(text),
  };
}

/**
 * The latencies wrk recorded, without the samples it adds. Before it prints (and before a script's done()),
 * wrk "corrects" its histogram for coordinated omission: with e = runtime / (answers / connections), every
 * recorded latency v >= 2e adds one sample at v - e, v - 2e, ... down to above e (`stats_correct` in wrk's
 * stats.c). Those samples are no answer anyone got, and a gateway's own figures cannot contain them. The
 * correction is undone from the whole histogram, which WRK_DUMP_LUA's done() prints: for v > e,
 * corrected(v) = recorded(v) + corrected(v + e), so recorded(v) = corrected(v) - corrected(v + e).
 * Returns { count, percentile(p) } in ms (wrk's own rank rule), or null without a dump.
 */
export function recordedLatencies(text) {
  const m = text.match(/^LATENCY_DUMP (\d+) (\d+) (\d+)((?: \d+:\d+)*)$/m);
  if (!m) return null;
  const [duration, answers, conns] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const corrected = new Map(m[4].trim().split(' ').filter(Boolean).map((vc) => vc.split(':').map(Number)));
  const perConn = Math.floor(answers / conns);
  const e = perConn > 0 ? Math.floor(duration / perConn) : Infinity;
  const values = [...corrected.keys()].sort((a, b) => a - b);
  const counts = values.map((v) => (v > e ? corrected.get(v) - (corrected.get(v + e) ?? 0) : corrected.get(v)));
  const count = counts.reduce((a, b) => a + b, 0);
  return {
    count,
    percentile(p) {
      const rank = Math.round((p / 100) * count + 0.5);
      let total = 0;
      for (let i = 0; i < values.length; i++) if ((total += counts[i]) >= rank) return values[i] / 1000;
      return NaN;
    },
  };
}

/**
 * A wrk script whose done() prints the p95 (`P95_US`, the corrected histogram's, as wrk's own table) and the whole
 * histogram with what undoing the correction needs (`LATENCY_DUMP <runtime_us> <answers> <connections> v:count ...`).
 * `connections` is written in by the caller: done() does not know it.
 */
export function wrkDumpLua(conns) {
  return [
    'done = function(summary, latency, requests)',
    '  io.write(string.format("P95_US %d\\n", latency:percentile(95)))',
    '  local parts = {}',
    '  for i = 1, #latency do',
    '    local v, c = latency(i)',
    '    parts[#parts + 1] = string.format(" %d:%d", v, c)',
    '  end',
    `  io.write(string.format("LATENCY_DUMP %d %d ${conns}", summary.duration, summary.requests) .. table.concat(parts) .. "\\n")`,
    'end',
    '',
  ].join('\n');
}
/**
 * One wrk run of d seconds against target T = { name, url, headers, pgid, wrkArgs?, wrkEnv? } (wrkArgs: e.g. a
 * Lua script; wrkEnv: extra environment, e.g. OPENSSL_CONF for wrk's TLS client); samples CPU from t+1s to
 * t+(d-1)s. upstreamPgid: the upstream's group, for its CPU column.
 */
export async function runWrk(cfg, T, d, tag, upstreamPgid) {
  const args = [`-t${cfg.threads}`, `-c${cfg.conns}`, `-d${d}s`, '--latency', ...(T.wrkArgs ?? []), ...T.headers.flatMap((h) => ['-H', h]), T.url];
  const w = start(`wrk-${tag}-${T.name.replace(/[^\w.-]/g, '_')}`, cfg.wrkBin, args, { cpu: cfg.loadCpu, extraEnv: T.wrkEnv ?? {} });
  const killer = setTimeout(() => { try { process.kill(-w.pid, 'SIGKILL'); } catch {} }, (d + 15) * 1000);
  let cpu = null;
  if (d >= 3) {
    await sleep(1000);
    // Taken after the first second: a run started beside this one (side by side) is ours, not another's.
    const pg = [...procs.filter((p) => !p.exited || p === w).map((p) => p.pid)];
    const a = snap(pg);
    await sleep((d - 2) * 1000);
    if (!w.exited) cpu = cpuDiff(cfg, a, snap(pg), { proxy: T.pgid, upstream: upstreamPgid, wrk: w.pid });
  }
  while (!w.exited) await sleep(20);
  clearTimeout(killer);
  forget(w);
  const text = fs.readFileSync(w.logFile, 'utf8');
  fs.renameSync(w.logFile, path.join(TMP, 'wrk', path.basename(w.logFile)));
  if (w.code !== 0) die(`wrk failed for ${T.name} (exit ${w.code}):\n${text.slice(-1500)}`);
  const r = parseWrk(text);
  if (!Number.isFinite(r.rps)) die(`cannot parse wrk output for ${T.name}:\n${text}`);
  return { ...r, cpu };
}

/** Waits (at most limitS, WAIT_IDLE by default) for two 1 s samples in a row where others use < NOISY_PCT % of a core. */
export async function waitQuiet(cfg, limitS = cfg.waitIdle) {
  if (limitS <= 0) return;
  const until = Date.now() + limitS * 1000;
  let quiet = 0, other = NaN;
  while (quiet < 2) {
    const a = snap();
    await sleep(1000);
    const c = cpuDiff(cfg, a, snap(), {});
    other = c.other + c.steal;
    quiet = other < cfg.noisyPct ? quiet + 1 : 0;
    if (quiet < 2 && Date.now() > until) { log(`WARNING: box still busy after ${Math.round(limitS)}s (${other}% of a core used by others); measuring anyway`); return; }
  }
  log(`box idle (${other}% of a core used by others)`);
}

/** A run is disturbed when others or the hypervisor took NOISY_PCT % of a core during its steady part. */
const disturbed = (cfg, r) => !!r.cpu && (r.cpu.other >= cfg.noisyPct || r.cpu.steal >= cfg.noisyPct);

/**
 * Waits for a quiet box, warms each target up (warmOf(name) seconds, not recorded), then runs ROUNDS rounds.
 * TGT: name -> target. Optional hooks around each wrk run (warm-ups included): before(name) just before it,
 * after(name, result, 'warm' | 'run') after it and before the cooldown (e.g. to let a target finish the work the
 * load left behind and to count it); after may set result.note, shown on the run's log line.
 * runSlot: seconds one run takes at most, to decide whether a disturbed run can still be repeated in time.
 * Returns [{ round, target, attempts, noisy, ...wrk result }] in the order they ran.
 */
export async function measure(cfg, names, TGT, { warmOf, upstreamPgid, maxSeconds, runSlot, before = async () => {}, after = async () => {} }) {
  await waitQuiet(cfg);
  for (const t of names) {
    // Asked once: a warmOf may answer differently the second time (bench/https warms a target
    // fully once, briefly at each later load).
    const seconds = warmOf(t);
    if (!seconds) continue;
    log(`warm-up ${t}: ${seconds}s`);
    await before(t);
    await after(t, await runWrk(cfg, TGT[t], seconds, 'warm', upstreamPgid), 'warm');
    await sleep(cfg.cooldown * 1000);
  }
  const runs = [];
  const pad = Math.max(8, ...names.map((t) => t.length));
  let retries = cfg.retries;
  log(`${cfg.rounds} round(s) x ${names.length} target(s): wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s --latency`);
  for (let round = 1; round <= cfg.rounds; round++) {
    const order = names.map((_, i) => names[(i + round - 1) % names.length]);
    for (const t of order) {
      let r, attempt = 0;
      for (;;) {
        await before(t);
        r = await runWrk(cfg, TGT[t], cfg.duration, `r${round}`, upstreamPgid);
        attempt++;
        r.noisy = disturbed(cfg, r);
        await after(t, r, 'run');
        log(`round ${round} ${t.padEnd(pad)} ${fmt(r.rps, 0).padStart(8)} req/s  p50 ${fmt(r.p50, 3)} ms  p99 ${fmt(r.p99, 3)} ms`
          + `  errors ${r.sockErrors}/${r.non2xx}  cpu% proxy ${fmt(r.cpu?.proxy ?? NaN, 0)} up ${fmt(r.cpu?.upstream ?? NaN, 0)}`
          + ` wrk ${fmt(r.cpu?.wrk ?? NaN, 0)} other ${fmt(r.cpu?.other ?? NaN, 0)} steal ${fmt(r.cpu?.steal ?? NaN, 0)}${r.noisy ? '  (disturbed)' : ''}`
          + (r.note ? `  ${r.note}` : ''));
        await sleep(cfg.cooldown * 1000);
        const timeLeft = maxSeconds - elapsedS() - (cfg.rounds * names.length - runs.length) * runSlot;
        if (!r.noisy || retries <= 0 || timeLeft < runSlot) break;
        retries--;
        log(`  repeating the disturbed run (retries left: ${retries})`);
        // Others are busy now: repeating at once would likely be disturbed again.
        await waitQuiet(cfg, Math.min(cfg.waitIdle, timeLeft - runSlot));
      }
      runs.push({ round, target: t, attempts: attempt, ...r });
    }
  }
  return runs;
}

/**
 * Side by side: `base` and each other of `names` loaded at the same time (cfg.pairs rounds; none when `base` is not
 * among them), both on the proxy core, each by its own wrk
 * on the load core (the order of the others rotates). The two share every slow or fast second of the
 * machine, so the ratio of their costs (CPU µs of the whole process per request, `after` measures it) does not
 * move with the machine's drift the way two runs a minute apart do. The kernel shares the core between threads,
 * not processes: a target with a busy worker gets a little more of it, so its req/s next to the base's says less
 * than its cost does. Hooks as in `measure`; runs are not repeated when disturbed (both sides were).
 * Returns [{ round, target, base: run, other: run }].
 */
export async function measurePairs(cfg, base, names, TGT, { upstreamPgid, before = async () => {}, after = async () => {} }) {
  const out = [];
  const pairs = cfg.pairs;
  const others = names.includes(base) ? names.filter((t) => t !== base) : [];
  if (pairs <= 0 || others.length === 0) return out;
  await waitQuiet(cfg);
  log(`${pairs} side-by-side round(s): ${base} and each of ${others.join(', ')} at once, wrk -t${cfg.threads} -c${cfg.conns} -d${cfg.duration}s each`);
  for (let round = 1; round <= pairs; round++) {
    const order = others.map((_, i) => others[(i + round - 1) % others.length]);
    for (const t of order) {
      await before(base);
      await before(t);
      const [a, b] = await Promise.all([
        runWrk(cfg, TGT[base], cfg.duration, `s${round}-a`, upstreamPgid),
        runWrk(cfg, TGT[t], cfg.duration, `s${round}-b`, upstreamPgid),
      ]);
      for (const r of [a, b]) r.noisy = disturbed(cfg, r);
      await after(base, a, 'pair');
      await after(t, b, 'pair');
      log(`side by side ${round} ${base} ${fmt(a.rps, 0)} req/s ${fmt(a.cpuUsPerReq ?? NaN, 1)} cpu-us/req | ${t} ${fmt(b.rps, 0)} req/s ${fmt(b.cpuUsPerReq ?? NaN, 1)} cpu-us/req`
        + ` -> cost ratio ${fmt(a.cpuUsPerReq / b.cpuUsPerReq, 3)}${b.note ? `  ${b.note}` : ''}`);
      await sleep(cfg.cooldown * 1000);
      out.push({ round, target: t, base: a, other: b });
    }
  }
  return out;
}

/** Seconds the side-by-side rounds may take at most, for a harness's watchdog. */
export const pairsSeconds = (cfg, names, runSlot) => cfg.pairs * Math.max(0, names.length - 1) * (runSlot + 10);
