/**
 * Every thread of the process runs a regular expression that backtracks past V8's budget (50,000
 * backtracks) on V8's linear-time engine instead. Callers write expressions the gateway runs
 * (schedule list filters, spec 1.1 rule 30); no check of an expression's shape catches every
 * polynomial one (`a*a*a*a*!` against 1,024 characters runs for minutes), and one such run would
 * hold the ScheduleActor's thread and every schedule of the node. V8 flags are the process's:
 * set once, before the workers start, they hold in every worker too. The linear engine answers
 * exactly what the backtracking one would; it has no back-references or look-arounds, and an
 * expression holding those keeps backtracking (the filters refuse both).
 */
import { setFlagsFromString } from 'node:v8';

let set = false;

export function boundRegExpBacktracking(): void {
  if (set) return;
  set = true;
  setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
}
