/**
 * What the screen reads of the last minute (spec 1.5 rule 2): the five numbers, a row per route
 * and the three rankings. Percentiles come from histograms merged over the minute's intervals
 * (and over nodes), never from an average of percentiles.
 */
import { type Histogram, ms, percentileMs, sum } from './histogram.ts';
import type { Gathered } from './interval.ts';

/** The period the five numbers cover, as the screen writes it. */
export const PERIOD = '60 s';
export const MINUTE_S = 60;
/** Routes each ranking names at most. */
export const RANKING_SIZE = 10;

export interface MinuteSummary {
  readonly period: typeof PERIOD;
  readonly requests: number;
  readonly failed: number;
  readonly rps: number;
  /** ms, null when nothing was answered. */
  readonly p50: number | null;
  readonly p95: number | null;
}

export interface RouteMinute {
  readonly route: string;
  readonly requests: number;
  readonly failed: number;
  /** ms, null when nothing was answered. */
  readonly p95: number | null;
  readonly totalMs: number;
}

export interface Rankings {
  /** Highest p95 first. */
  readonly slowest: readonly string[];
  /** Most failed answers first; routes with none are not ranked. */
  readonly failing: readonly string[];
  /** Most time spent answering first. */
  readonly totalTime: readonly string[];
}

export function minuteSummary(g: Gathered, scratch: Histogram): MinuteSummary {
  const h = sum(g.parts, scratch);
  return {
    period: PERIOD,
    requests: g.requests,
    failed: g.failed,
    rps: Math.round((g.requests / MINUTE_S) * 1000) / 1000,
    p50: percentileMs(h, 50),
    p95: percentileMs(h, 95),
  };
}

export function routeMinute(route: string, g: Gathered, scratch: Histogram): RouteMinute {
  return { route, requests: g.requests, failed: g.failed, p95: percentileMs(sum(g.parts, scratch), 95), totalMs: ms(g.us) };
}

export function rank(rows: readonly RouteMinute[], size = RANKING_SIZE): Rankings {
  const top = (keep: (r: RouteMinute) => boolean, key: (r: RouteMinute) => number) =>
    rows
      .filter(keep)
      .sort((a, b) => key(b) - key(a) || (a.route < b.route ? -1 : a.route > b.route ? 1 : 0))
      .slice(0, size)
      .map((r) => r.route);
  return {
    slowest: top((r) => r.p95 !== null, (r) => r.p95 ?? 0),
    failing: top((r) => r.failed > 0, (r) => r.failed),
    totalTime: top((r) => r.requests > 0, (r) => r.totalMs),
  };
}
