// headers.mjs - request headers a gateway command hands the bench: `BENCH_HEADER Name: value` lines on its
// standard output (its log file), re-read until its readiness GET answers 200.
import fs from 'node:fs';
import { die } from './procs.mjs';

export const HEADER_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/;

/** `BENCH_HEADER Name: value` lines the command printed so far. */
export function benchHeaders(proc) {
  const out = printed(proc, 'BENCH_HEADER');
  for (const h of out) if (!HEADER_RE.test(h)) die(`${proc.name}: "BENCH_HEADER ${h}" is not "BENCH_HEADER Name: value"`);
  return out;
}
/** The values of `<TAG> value` lines the command printed so far. */
export function printed(proc, tag) {
  const text = fs.existsSync(proc.logFile) ? fs.readFileSync(proc.logFile, 'utf8') : '';
  return [...text.matchAll(new RegExp(`^${tag} (.*)$`, 'gm'))].map((m) => m[1].trim()).filter(Boolean);
}
// Merged header lines: a later line replaces an earlier one of the same name (case-insensitive).
export const headerName = (h) => h.slice(0, h.indexOf(':')).trim().toLowerCase();
export function mergeHeaders(...lists) {
  const by = new Map();
  for (const h of lists.flat()) by.set(headerName(h), h);
  return [...by.values()];
}
export const headerObject = (lines) => Object.fromEntries(lines.map((h) => [h.slice(0, h.indexOf(':')).trim(), h.slice(h.indexOf(':') + 1).trim()]));
