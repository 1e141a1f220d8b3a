export {
  type CadenceResult,
  DAY_MS,
  HOUR_MS,
  MAX_TIMEOUT_MS,
  MIN_EVERY_MS,
  MINUTE_MS,
  parseDuration,
  parseEvery,
  parseTimeout,
  readIsoDuration,
  readNominalDuration,
  SECOND_MS,
} from './duration.ts';
export { type CronSpec, cronMatches, nextCronWallTime, parseCron, type WallClock } from './cron.ts';
export {
  type Cadence,
  nextCronTurn,
  nextEvery,
  nextTurn,
  parseAt,
  parseTimezone,
  type TurnContext,
  zoneOffsetAt,
} from './next-turn.ts';
