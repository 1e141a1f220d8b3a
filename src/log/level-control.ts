/**
 * The operational level at run time (spec 1.4 rule 3). A level set in the console travels as a
 * dated change through the change bus and applies at once on every node. A node leaves aside the
 * change it found stored when it started (a restart returns to GATEWAY_LOG_LEVEL) and applies
 * every later one, whatever its date says: the date is the clock of the node that made the change,
 * and a node whose clock is behind this one's still makes a change after it. A level more
 * talkative than the node's startup level reverts 30 minutes after that date.
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
  /** The change the first snapshot carried (undefined until it came): made before this node started. */
  #found: LevelChange | null | undefined = undefined;
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
    if (this.#found === undefined) this.#found = change;
    // The change found at start is left aside, unless this node's own clock dates it after its
    // start (made while the node was booting).
    const current = change !== null && !(same(change, this.#found) && change.at < this.startedAt) ? change : null;
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
        // Said before the move, under the more talkative level in force.
        this.#say('the operational log level returned to its startup level', { to: this.startup, after: '30 minutes' });
        this.#set(this.startup);
      });
    }
    // Said under the more talkative of the two levels: before the move when it turns the level
    // down (so that is recorded, and by whom), after it when it turns the level up. `to`, not
    // `level`: a JSON line has a level of its own.
    const said = { to: current.level, by: current.by, revertsAt: this.#revertsAt === null ? null : new Date(this.#revertsAt).toISOString() };
    const louder = RANK[current.level] < RANK[this.hub.level];
    if (louder) this.#set(current.level);
    this.#say('operational log level set', said);
    if (!louder) this.#set(current.level);
  }

  /**
   * A line about the level, at info, or at the level in force when that is warn or error: a node
   * that runs at warn still records who moved its level and where.
   */
  #say(msg: string, attrs: Record<string, unknown>): void {
    const inForce = this.hub.level;
    this.log[inForce === 'warn' || inForce === 'error' ? inForce : 'info'](msg, attrs);
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
