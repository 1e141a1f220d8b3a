/**
 * Lines an output did not take, counted, with the operator told once when an episode of losing
 * them begins and once when lines flow again, with how many were lost in between. The FdWriter
 * counts what its pipe refused; the LogShipper's client what the shared ring had no room for.
 */
import type { Logger } from '../../log/logger.ts';

export type OutputTrouble = 'dropping' | 'flowing' | 'closed';

export class DropCount {
  /** Lines dropped since start. */
  total = 0;
  /** `total` when the current episode began; null while lines flow. */
  #before: number | null = null;

  constructor(private readonly tell: (event: 'dropping' | 'flowing', dropped: number) => void) {}

  /** `lines` lost; `episode` false for an output that is gone, which says so itself. */
  add(lines: number, episode = true): void {
    if (episode && this.#before === null) {
      this.#before = this.total;
      this.tell('dropping', 0);
    }
    this.total += lines;
  }

  /** Lines were taken again: the episode, if one was on, ends. */
  flowing(): void {
    if (this.#before === null) return;
    const dropped = this.total - this.#before;
    this.#before = null;
    this.tell('flowing', dropped);
  }
}

/** What the operational log says of an output's trouble (`name`: standard output or error). */
export function reportTrouble(log: Logger, name: string): (event: OutputTrouble, detail: Record<string, unknown>) => void {
  return (event, detail) => {
    if (event === 'flowing') log.info(`${name} takes lines again`, detail);
    else if (event === 'dropping') log.warn(`${name} is not taking lines fast enough; lines are dropped and counted`, detail);
    else log.warn(`${name} is closed; its lines are dropped and counted`, detail);
  };
}
