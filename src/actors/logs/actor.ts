/** LogShipper, worker side: formats, writes and pushes what the main thread hands over. */
import { runActor } from '../../workers/actor-runtime.ts';
import { accessAgent, accessLine, appAgent, appLine, jsonLine, logResource } from '../../log/format.ts';
import type { AccessEntry } from '../../log/access.ts';
import type { LogRecord } from '../../log/record.ts';
import { ByteRingReader } from '../../workers/byte-ring.ts';
import { FdWriter } from './fd-writer.ts';
import { reportTrouble } from './drops.ts';
import { logPush, type LogPush } from './push.ts';
import type { LogCalls, LogInit, LogMode, LogTells } from './messages.ts';

/** Records held at most while the mode is not known yet (the boot's first lines). */
const HOLD_MAX = 10_000;
/** How long a stop waits for the outputs to take what is queued. */
const STOP_WAIT_MS = 3_000;

runActor<LogInit, LogCalls, never, LogTells>(async (init, ctx) => {
  const resource = logResource(init.version, init.node);
  const out = new FdWriter(init.stdoutFd, { onTrouble: reportTrouble(ctx.log, 'standard output') });
  const err = new FdWriter(init.stderrFd, { onTrouble: reportTrouble(ctx.log, 'standard error') });
  // null until the configuration says which mode (held records then go out in it), so that a
  // node whose stored mode is agent writes no boot line in the startup format.
  let mode: LogMode | null = init.mode;
  const held: Array<{ app: readonly LogRecord[] } | { access: readonly AccessEntry[] }> = [];
  let heldCount = 0;
  let heldDropped = { app: 0, access: 0 };
  let push: LogPush | null = null;
  /** Records of a push that was stopped, still counted in the state. */
  let pastDrops = { batches: 0, app: 0, access: 0 };

  const startPush = () => {
    if (!init.otlpEndpoint) throw new Error('the push mode needs GATEWAY_OTLP_ENDPOINT');
    push = logPush({
      endpoint: init.otlpEndpoint, node: init.node, version: init.version, clock: ctx.clock,
      // The collector cannot say it is down: the push's own reports go to standard error as well.
      onReport: (level, msg, attrs) => {
        err.push(appLine({ time: new Date(ctx.clock.now()).toISOString(), type: 'app', level, msg, attrs }, init.format));
        ctx.log[level](msg, attrs);
      },
    });
  };
  const stopPush = async () => {
    const p = push;
    if (!p) return;
    push = null;
    await p.shutdown();
    const d = p.dropped();
    pastDrops = { batches: pastDrops.batches + p.droppedBatches(), app: pastDrops.app + d.app, access: pastDrops.access + d.access };
  };
  if (mode === 'otlp') startPush();

  // Access lines made on the main thread: taken from the ring as they land, written without a
  // copy, and released once written. The main thread writes them only in a mode this side is in.
  const ring = new ByteRingReader(init.lines);
  let stopped = false;
  const takeLines = (): void => {
    for (let region = ring.take(); region !== null; region = ring.take()) {
      const taken = region;
      out.pushBytes(taken.bytes, () => ring.release(taken));
    }
  };
  const pump = (): void => {
    if (stopped) return;
    takeLines();
    void ring.wait().then(pump);
  };
  pump();

  const hold = (batch: { app: readonly LogRecord[] } | { access: readonly AccessEntry[] }, size: number, kind: 'app' | 'access') => {
    if (heldCount + size > HOLD_MAX) {
      heldDropped = { ...heldDropped, [kind]: heldDropped[kind] + size };
      return;
    }
    held.push(batch);
    heldCount += size;
  };
  const release = () => {
    for (const batch of held.splice(0)) {
      if ('app' in batch) app(batch.app);
      else access(batch.access);
    }
    heldCount = 0;
  };
  const app = (records: readonly LogRecord[]): void => {
    if (mode === null) hold({ app: records }, records.length, 'app');
    else if (mode === 'otlp') push!.app(records);
    else if (mode === 'agent') for (const r of records) err.push(jsonLine(appAgent(r, resource)));
    else for (const r of records) err.push(appLine(r, init.format));
  };
  const access = (entries: readonly AccessEntry[]): void => {
    if (mode === null) hold({ access: entries }, entries.length, 'access');
    else if (mode === 'otlp') push!.access(entries);
    else if (mode === 'agent') for (const e of entries) out.push(jsonLine(accessAgent(e, resource)));
    else for (const e of entries) out.push(accessLine(e, init.format));
  };

  return {
    told: {
      'log.app': app,
      'log.access': access,
    },
    handlers: {
      'output.set': async ({ mode: next }) => {
        // Lines made in the mode in force go out before those of the next.
        takeLines();
        if (next === mode) return null;
        if (next === 'otlp') startPush();
        else if (mode === 'otlp') await stopPush();
        mode = next;
        release();
        return null;
      },
      state: () => {
        const live = push?.dropped() ?? { app: 0, access: 0 };
        return {
          mode: mode ?? 'startup',
          droppedBatches: pastDrops.batches + (push?.droppedBatches() ?? 0),
          droppedRecords: {
            app: pastDrops.app + live.app + err.dropped + heldDropped.app,
            access: pastDrops.access + live.access + out.dropped + heldDropped.access,
          },
          queued: (push?.queued() ?? 0) + out.waiting + err.waiting + heldCount + ring.lines(),
        };
      },
      settle: async () => {
        takeLines();
        await push?.flush();
        await Promise.all([out.idle(), err.idle()]);
        return null;
      },
    },
    stop: async () => {
      stopped = true;
      takeLines();
      // Stopped before the configuration said a mode (a boot that failed): the startup format.
      if (mode === null) {
        mode = 'startup';
        release();
      }
      await stopPush();
      // A reader that stalls for good must not hold the stop: what it did not take is lost.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all([out.idle(), err.idle()]), new Promise((r) => { timer = setTimeout(r, STOP_WAIT_MS); })]);
      // The worker exits once nothing is left to run: a pending bound would hold it for its length.
      clearTimeout(timer);
    },
  };
});
