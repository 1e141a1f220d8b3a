// report.mjs - the tables a data-plane bench prints: medians over rounds, the per-run table, the build benched.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

export function fmt(x, d = 2) { return Number.isFinite(x) ? x.toFixed(d) : 'NA'; }
export const median = (xs) => {
  const a = xs.filter(Number.isFinite).sort((x, y) => x - y);
  if (!a.length) return NaN;
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
};
/**
 * A bootstrap interval of the median of `xs` (each round's own ratio): resampled `reps` times with
 * a fixed seed, so the same rounds always give the same interval. [NaN, NaN] under three values.
 */
export function medianInterval(xs, level = 0.9, reps = 4000) {
  const a = xs.filter(Number.isFinite);
  if (a.length < 3) return [NaN, NaN];
  let seed = 0x9e3779b9;
  const rand = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const meds = [];
  for (let i = 0; i < reps; i++) meds.push(median(a.map(() => a[Math.floor(rand() * a.length)])));
  meds.sort((x, y) => x - y);
  return [meds[Math.floor(((1 - level) / 2) * reps)], meds[Math.ceil(((1 + level) / 2) * reps) - 1]];
}

/**
 * Whether a ratio bar holds, said with the rounds' spread: HOLDS or DOES NOT HOLD only when the
 * whole interval of the median round ratio is on one side of the bar, CANNOT TELL when the noise
 * between rounds is larger than the distance to the bar.
 */
export function barVerdict(roundRatios, bar) {
  const [lo, hi] = medianInterval(roundRatios);
  const word = !Number.isFinite(lo) ? 'CANNOT TELL (fewer than 3 rounds)' : lo >= bar ? 'HOLDS' : hi < bar ? 'DOES NOT HOLD' : 'CANNOT TELL at this noise';
  return { lo, hi, word, holds: Number.isFinite(lo) && lo >= bar };
}

/**
 * The report of side-by-side runs (`measurePairs` in load.mjs): a row per pair, then per target of `bars`
 * ([[target, bar]]) the verdict read from its pairs' cost ratios (the base's CPU per request over the
 * target's). Returns { lines, verdicts }, both empty without pairs; the lines begin with a blank one.
 */
export function sideBySide(pairs, base, bars, cfg) {
  if (!pairs.length) return { lines: [], verdicts: [] };
  const cost = (p) => p.base.cpuUsPerReq / p.other.cpuUsPerReq;
  const lines = ['', `== side by side: ${base} and the target loaded at once on cpu ${cfg.proxyCpu}, ${cfg.pairs} round(s); cost ratio = ${base}'s cpu_us/req / the target's ==`];
  lines.push(table(['round', 'target', `${base}_req/s`, 'target_req/s', `${base}_cpu_us/req`, 'target_cpu_us/req', 'cost_ratio', 'rps_ratio', 'note'],
    pairs.map((p) => [p.round, p.target, fmt(p.base.rps, 0), fmt(p.other.rps, 0), fmt(p.base.cpuUsPerReq, 1), fmt(p.other.cpuUsPerReq, 1), fmt(cost(p), 3), fmt(p.other.rps / p.base.rps, 3),
      [p.base.noisy || p.other.noisy ? 'disturbed' : '', p.other.note ?? ''].filter(Boolean).join(' ')])));
  const verdicts = [];
  for (const [t, bar] of bars) {
    const xs = pairs.filter((p) => p.target === t).map(cost);
    if (!xs.length) continue;
    const v = barVerdict(xs, bar);
    verdicts.push({ target: t, sideBySide: true, ratio: median(xs), want: bar, holds: v.holds, verdict: v.word, interval: [v.lo, v.hi] });
    lines.push(`target (side by side): ${t} keeps >= ${fmt(100 * bar, 0)} % of ${base}'s throughput per CPU: median pair ${fmt(100 * median(xs), 1)} %, `
      + `90 % interval ${fmt(100 * v.lo, 1)}-${fmt(100 * v.hi, 1)} % -> ${v.word}`);
  }
  return { lines, verdicts };
}

/** Columns aligned: the first to the left, the others to the right. */
export function table(header, rows) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/** Per target: medians of req/s and latencies, the target's CPU, errors and disturbed runs. */
export function medians(runs, names) {
  const med = {};
  for (const t of names) {
    const rs = runs.filter((r) => r.target === t);
    med[t] = Object.fromEntries(['rps', 'p50', 'p90', 'p99'].map((k) => [k, median(rs.map((r) => r[k]))]));
    med[t].proxyCpu = median(rs.map((r) => r.cpu?.proxy ?? NaN));
    // µs of the target's CPU (% of one core over the steady part) per request answered in that run.
    med[t].cpuUsPerReq = median(rs.map((r) => ((r.cpu?.proxy ?? NaN) * 1e4) / r.rps));
    med[t].errors = rs.reduce((s, r) => s + r.sockErrors + r.non2xx, 0);
    med[t].noisy = rs.filter((r) => r.noisy).length;
  }
  return med;
}

/** Every measured run with its CPU figures; extra: [{ head, cell(run) }] columns before the note. */
export function perRunTable(runs, extra = []) {
  return table(['round', 'target', 'req/s', 'p50_ms', 'p99_ms', 'sock_err', 'non2xx', ...extra.map((c) => c.head), 'pcore%', 'lcore%', 'proxy%', 'upstream%', 'wrk%', 'other%', 'steal%', 'note'],
    runs.map((r) => [r.round, r.target, fmt(r.rps, 0), fmt(r.p50, 3), fmt(r.p99, 3), r.sockErrors, r.non2xx, ...extra.map((c) => c.cell(r)),
      ...['proxyCore', 'loadCore', 'proxy', 'upstream', 'wrk', 'other', 'steal'].map((k) => fmt(r.cpu?.[k] ?? NaN, 0)),
      [r.noisy ? 'DISTURBED' : '', r.attempts > 1 ? `attempt ${r.attempts}` : ''].filter(Boolean).join(', ')]));
}

/** The closing lines: disturbed runs and errors, if any. */
export function warnings(runs, cfg) {
  const out = [];
  const noisy = runs.filter((r) => r.noisy).length;
  const errs = runs.reduce((s, r) => s + r.sockErrors + r.non2xx, 0);
  out.push(noisy ? `WARNING: ${noisy} run(s) saw other processes or steal >= ${cfg.noisyPct}% of a core: treat those numbers with care`
    : `no run kept saw other processes or steal >= ${cfg.noisyPct}% of a core (a disturbed run is repeated, and the repeat kept)`);
  if (errs) out.push(`WARNING: ${errs} socket error(s) / non-2xx response(s) in total (see the per-run table)`);
  return out;
}

/** What a gateway build runs: dist/ build time and the checkout's commit (read-only git calls). */
export function gatewayBuild(repo, cli) {
  const git = (...a) => spawnSync('git', ['-C', repo, ...a], { encoding: 'utf8', timeout: 5000 });
  const sha = git('rev-parse', '--short', 'HEAD').stdout?.trim();
  const dirty = git('status', '--porcelain', '--', 'src').stdout?.trim();
  let builtAt = '?';
  try { builtAt = fs.statSync(cli).mtime.toISOString(); } catch {}
  return `dist/ built ${builtAt}${sha ? `, git ${sha}${dirty ? ' + uncommitted changes in src/' : ''}` : ''}`;
}

/** A src/ .ts file newer than the build: the bench would run old code (the run goes on). */
export function staleBuild(srcDir, cli) {
  const newest = (dir) => {
    let m = 0;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      m = Math.max(m, e.isDirectory() ? newest(p) : e.name.endsWith('.ts') ? fs.statSync(p).mtimeMs : 0);
    }
    return m;
  };
  try { return newest(srcDir) > fs.statSync(cli).mtimeMs; } catch { return false; }
}
