/** AuditBatcher, worker side. */
import { runActor } from '../../workers/actor-runtime.ts';
import { openStore } from '../../store/orm.ts';
import { errorAttrs } from '../../log/logger.ts';
import { insertLines, queryEvents, storedIds, sweepEvents, type AuditRow } from '../../store/audit.ts';
import { readAuditSettings, sweepLines, writeAuditSettings, writeLastSweep, type AuditSettings } from '../../store/audit-settings.ts';
import { every } from '../../clock/every.ts';
import type { AuditCalls, AuditEntry, AuditEvent, AuditInit, AuditTells } from './messages.ts';
import { BatchWriter } from './writer.ts';
import { streamOf } from './messages.ts';
import { auditPush, type AuditPush } from './push.ts';
import { operationEntry } from '../../core/audit/operations.ts';

/** The retention sweep runs this often on every node (deleting twice what is past the line is harmless). */
export const SWEEP_EVERY_MS = 60 * 60_000;
/** How soon a switch set on another node reaches this one. */
const SETTINGS_EVERY_MS = 60_000;

runActor<AuditInit, AuditCalls, AuditEvent, AuditTells>(async (init, ctx) => {
  const store = await openStore({ ...init.store, poolSize: 2 }, { log: ctx.log });
  let settings: AuditSettings = await readAuditSettings(store);

  // The collector push (licensed): made when a switch is first on, a copy of the stored lines of
  // the streams switched on.
  let push: AuditPush | undefined;
  const pushing = (): boolean => init.licensed && init.otlpEndpoint !== null && (settings.push.audit || settings.push.console);
  const pushed = (rows: readonly AuditRow[]): void => {
    const endpoint = init.otlpEndpoint;
    if (!pushing() || endpoint === null) return;
    const wanted = rows.filter((r) => settings.push[streamOf(r)]);
    if (wanted.length === 0) return;
    push ??= auditPush({
      endpoint, node: init.node, clock: ctx.clock,
      onReport: (level, msg, attrs) => ctx.log[level](msg, attrs),
    });
    push.push(wanted);
  };

  const dropped = { audit: 0, console: 0 };
  /** A line as it waits: a recorded line's id and place (an audited call's line has neither). */
  type Waiting = AuditEntry & { readonly id?: string; readonly seq?: number; readonly again?: true };
  const writer = new BatchWriter<Waiting>({
    clock: ctx.clock,
    log: ctx.log,
    write: async (told) => {
      // Told again after a crash: a line written before it, or still in the queue that crossed
      // after the restart (it comes first), is not written twice.
      let batch = told;
      if (told.some((l) => l.again)) {
        const stored = await storedIds(store, told.flatMap((l) => (l.again && l.id !== undefined ? [l.id] : [])));
        const once = new Set<string>();
        batch = told.filter((l) => l.id === undefined || (!stored.has(l.id) && !once.has(l.id) && once.add(l.id)));
      }
      const ids = await insertLines(store, batch, init.node);
      let acked = 0;
      for (const line of told) if (line.seq !== undefined && line.seq > acked) acked = line.seq;
      if (acked > 0) ctx.emit({ type: 'audit.acked', record: acked });
      // Rows for the collector are made only when a switch is on.
      if (pushing()) pushed(batch.map(({ seq: _seq, again: _again, ...e }, i) => ({ ...e, node: init.node, id: ids[i]! })));
    },
  });

  const sweep = async (): Promise<void> => {
    const now = ctx.clock.now();
    settings = await readAuditSettings(store);
    const removed = await sweepEvents(store, sweepLines(now, settings));
    await writeLastSweep(store, { at: now, deleted: removed });
    if (removed.changes + removed.security + removed.operations > 0) ctx.log.info('audit trail swept', { ...removed });
  };

  // Background loops report and go on; the next turn tries again.
  const sweeping = every(ctx.clock, SWEEP_EVERY_MS, sweep, (err) => ctx.log.warn('audit retention sweep failed; the next one tries again', errorAttrs(err)));
  const rereading = every(ctx.clock, SETTINGS_EVERY_MS, async () => { settings = await readAuditSettings(store); }, () => { /* kept as they were; the sweep reports the database */ });

  return {
    handlers: {
      'audit.query': (q) => queryEvents(store, q),
      'settings.get': async () => (settings = await readAuditSettings(store)),
      'settings.put': async ({ settings: choice, by }) => {
        await writeAuditSettings(store, choice, ctx.clock.now(), by);
        return (settings = await readAuditSettings(store));
      },
      'audit.state': () => {
        const lost = push?.dropped() ?? { audit: 0, console: 0 };
        return { dropped: { audit: dropped.audit + lost.audit, console: dropped.console + lost.console }, queued: push?.queued() ?? 0 };
      },
      'audit.settle': async () => {
        await sweeping.idle();
        await writer.settle();
        return null;
      },
    },
    told: {
      'audit.record': (entries) => {
        for (const lost of writer.add(entries)) dropped[streamOf(lost)] += 1;
      },
      'audit.call': (calls) => {
        const entries: Waiting[] = [];
        for (const call of calls) {
          try {
            entries.push(operationEntry(call));
          } catch (err) {
            // A line that cannot be made is lost alone, and said; the batch's others are written.
            dropped.audit += 1;
            ctx.log.warn('an audited call\'s line could not be made; it is counted as dropped', { route: call.routeId, ...errorAttrs(err) });
          }
        }
        for (const lost of writer.add(entries, true)) dropped[streamOf(lost)] += 1;
      },
      'audit.written': (rows) => pushed(rows),
    },
    stop: async () => {
      await sweeping.stop();
      await rereading.stop();
      await writer.stop();
      await push?.shutdown();
      await store.close();
    },
  };
});
