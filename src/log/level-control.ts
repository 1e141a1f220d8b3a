/**
 * The operational level at run time (spec 1.4 rule 3). A level set in the console travels as a
 * dated change through the change bus and applies at once on every node; a node applies only a
 * change made after it started, so a restart returns to GATEWAY_LOG_LEVEL. A level more
 * talkative than the node's startup level reverts after 30 minutes on the gateway's clock.
 */
import type { Clock, Timer } from '../clock/clock.ts';
import type { LogLevel } from '../settings/settings.ts';
import { RANK, type LogHub, type Logger } from './logger.ts';

export const REVERT_AFTER_MS = 30 * 60 * 1000;

/** The level as the console set it last (the settings row). */
export interface LevelChange {
  readonly level: LogLevel;
  /** Clock ms of the change. */
  readonly at: number;
  readonly by: string;
}

export interface LevelState {
  readonly level: LogLevel;
  readonly startupLevel: LogLevel;
  /** Clock ms when a temporary level returns to the startup one, or null. */
  readonly revertsAt: number | null;
}

export class LevelControl {
  #applied: LevelChange | null = null;
  #revertsAt: number | null = null;
  #timer: Timer | null = null;

  constructor(
    private readonly hub: LogHub,
    private readonly startup: LogLevel,
    private readonly startedAt: number,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Follows the change the snapshot carries (null: none); the same change again does nothing. */
  apply(change: LevelChange | null): void {
    const current = change !== null && change.at >= this.startedAt ? change : null;
    if (same(current, this.#applied)) return;
    this.#applied = current;
    this.#cancel();
    if (current === null) {
      this.#set(this.startup);
      return;
    }
    if (RANK[current.level] < RANK[this.startup]) {
      const revertsAt = current.at + REVERT_AFTER_MS;
      const left = revertsAt - this.clock.now();
      if (left <= 0) {
        this.#set(this.startup);
        return;
      }
      this.#revertsAt = revertsAt;
      this.#timer = this.clock.after(left, () => {
        this.#timer = null;
        this.#revertsAt = null;
        this.#set(this.startup);
        this.log.info('the operational log level returned to its startup level', { to: this.startup, after: '30 minutes' });
      });
    }
    // Said under the more talkative of the two levels: before the move when it turns the level
    // down (so that is recorded, and by whom), after it when it turns the level up (a line at info
    // said under warn would be dropped). `to`, not `level`: a JSON line has a level of its own.
    const said = { to: current.level, by: current.by, revertsAt: this.#revertsAt === null ? null : new Date(this.#revertsAt).toISOString() };
    const louder = RANK[current.level] < RANK[this.hub.level];
    if (louder) this.#set(current.level);
    this.log.info('operational log level set', said);
    if (!louder) this.#set(current.level);
  }

  state(): LevelState {
    return { level: this.hub.level, startupLevel: this.startup, revertsAt: this.#revertsAt };
  }

  close(): void {
    this.#cancel();
  }

  #set(level: LogLevel): void {
    this.hub.setLevel(level);
  }

  #cancel(): void {
    this.#timer?.cancel();
    this.#timer = null;
    this.#revertsAt = null;
  }
}

function same(a: LevelChange | null, b: LevelChange | null): boolean {
  return a === b || (a !== null && b !== null && a.level === b.level && a.at === b.at && a.by === b.by);
}
