/**
 * An OtlpPush against a real OTLP/HTTP receiver on loopback, on a test clock, with every attempt
 * and report it made. The clock drives the batch interval and the backoff; the sockets are real,
 * so a test waits (bounded polls) for each attempt to be settled before moving time.
 */
import type { TestContext } from 'node:test';
import { ManualClock } from '../../src/clock/clock.ts';
import type { OtlpPush, OtlpPushBaseOptions, PushAttempt } from '../../src/actors/otlp-push.ts';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.ts';

export const START = Date.UTC(2026, 0, 5, 9, 0, 0);

export interface Report {
  readonly level: 'info' | 'warn';
  readonly msg: string;
  readonly attrs: Record<string, unknown>;
}

export interface PushHarness<Item, Stream extends string> {
  readonly receiver: OtlpReceiver;
  readonly clock: ManualClock;
  readonly push: OtlpPush<Item, Stream>;
  readonly attempts: PushAttempt[];
  readonly reports: Report[];
  /** Resolves once `n` attempts have been settled. */
  attempted(n: number): Promise<PushAttempt>;
}

/** `make` builds the push from options aimed at the receiver, on the clock, with the observers. */
export async function pushHarness<Item, Stream extends string>(
  t: TestContext,
  make: (base: OtlpPushBaseOptions & Required<Pick<OtlpPushBaseOptions, 'onAttempt' | 'onReport'>>) => OtlpPush<Item, Stream>,
): Promise<PushHarness<Item, Stream>> {
  const receiver = await startOtlpReceiver();
  const clock = new ManualClock(START);
  const attempts: PushAttempt[] = [];
  const reports: Report[] = [];
  const push = make({
    endpoint: receiver.url,
    clock,
    onAttempt: (a) => attempts.push(a),
    onReport: (level, msg, attrs) => reports.push({ level, msg, attrs }),
  });
  t.after(async () => {
    await push.shutdown();
    await receiver.close();
  });
  return {
    receiver, clock, push, attempts, reports,
    async attempted(n) {
      await until(() => attempts.length >= n, `attempt ${n}`);
      return attempts[n - 1]!;
    },
  };
}

/** Real sockets take real time: poll, bounded. */
export async function until(cond: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The parts of an attempt that do not depend on the network's own wording. */
export function pick(a: PushAttempt) {
  return { outcome: a.outcome, refusals: a.refusals, dropped: a.dropped, retryInMs: a.retryInMs };
}
