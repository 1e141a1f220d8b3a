// settle.mjs - after a wrk run: wait until a gateway has finished the work the load left behind (lines it still
// writes), so that the next run does not pay for this one and the lines can be counted.
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuSeconds } from './load.mjs';

/**
 * Polls every 250 ms until the gateway's group is idle (its CPU below `pct` % of a core over the look) and
 * `count()` did not move in that look, or `timeoutS` passed. Returns { count, cpu, lastAt, settled }: the last
 * count, the group's CPU seconds then, the time (ms) the count last moved (start of the wait if it never did).
 */
export async function settle({ pgid, count, timeoutS, pct }) {
  const t0 = Date.now();
  let n = count(), cpu = cpuSeconds(pgid), lastAt = t0;
  while (Date.now() - t0 < timeoutS * 1000) {
    await sleep(250);
    const m = count(), c = cpuSeconds(pgid);
    const busyPct = (100 * (c - cpu)) / 0.25;
    if (m !== n) lastAt = Date.now();
    const quiet = m === n && busyPct < pct;
    n = m; cpu = c;
    if (quiet) return { count: n, cpu, lastAt, t0, settled: true };
  }
  return { count: n, cpu, lastAt, t0, settled: false };
}
