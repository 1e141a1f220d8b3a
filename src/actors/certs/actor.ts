/** CertActor, worker side: the certificate store, the TLS settings, the file re-read loop. */
import { runActor } from '../../workers/actor-runtime.ts';
import { openStore } from '../../store/orm.ts';
import { Change, CertificateRow } from '../../store/entities.ts';
import { errorAttrs } from '../../log/logger.ts';
import { every } from '../../clock/every.ts';
import { changeMark } from '../config/snapshot.ts';
import { followChanges, inOrder } from '../change-follower.ts';
import { retryBusy } from '../../store/busy.ts';
import { FILE_REREAD_MS, type CertCalls, type CertEvent, type CertInit, type CertRecord, type CertTells, type Material } from './messages.ts';
import { build, loadRows, type Loaded } from './records.ts';
import { renewalProblem } from './placement-rules.ts';
import { readTlsSettings } from './tls-settings.ts';
import { certificateHandlers } from './handlers.ts';
import type { CertDeps } from './deps.ts';
import { settingsHandlers, trafficTells } from './settings-handlers.ts';
import { doorHandlers } from './door-handlers.ts';
import { readFilePair } from './sources/file.ts';
import { startDigest } from './digest-loop.ts';
import { acmeAuthorityHandlers } from './acme-authorities.ts';
import { startAcmeIssuer } from './acme-issuer.ts';
import { RelayedChallenges } from './challenge-relay.ts';
import { nodeServing } from '../node-serving.ts';

runActor<CertInit, CertCalls, CertEvent, CertTells>(async (init, ctx) => {
  // One connection more than the calls need: an order's issuance holds one on PostgreSQL (its lock).
  const store = await openStore({ ...init.store, poolSize: 3 }, { log: ctx.log });
  const masterKey = Buffer.from(init.masterKey, 'base64');
  let mark = '';
  let records = new Map<string, CertRecord>();
  const reported = new Set<string>();
  // The last pair read of each placed file-system certificate, served while a renewal is half-written.
  const lastGood = new Map<string, Material>();
  let fromLastPair: ReadonlySet<string> = new Set();
  // File-system renewals the placement rules hold back: id to the rule and the pair's fingerprint.
  const heldBack = new Map<string, { rule: string; fingerprint: string }>();

  const serving = nodeServing({ store, node: init.node, what: 'certs', log: ctx.log });
  const queue = inOrder();
  const publish = () => queue(async (): Promise<void> => {
    const em = store.em();
    mark = await changeMark(em, ['tls']);
    const loaded = await loadRows(em);
    const settings = await readTlsSettings(em);
    const built = build(loaded, settings, masterKey, ctx.clock.now(), lastGood, new Map([...heldBack].map(([id, h]) => [id, h.rule])));
    records = new Map(built.records.map((r) => [r.id, r]));
    fromLastPair = built.fromLastPair;
    for (const r of built.records) {
      // Said once per certificate and reason, not at every publish.
      const said = `${r.id}:${r.state}`;
      if ((r.state === 'unsealable' || r.state === 'missing') && r.planes.length > 0 && !reported.has(said)) {
        reported.add(said);
        ctx.log.error('a placed certificate cannot be presented on this node', { certificate: r.id, name: r.name, reason: r.detail ?? r.state });
      }
    }
    ctx.emit({ type: 'snapshot', snapshot: { certificates: built.records, placements: loaded.placements, material: built.material, settings } });
    await serving.holds(Number(mark.split(',')[0] ?? 0) || 0);
  });
  await publish();
  const follower = await followChanges({
    store, log: ctx.log, pollMs: init.pollMs, what: 'certificate',
    readMark: () => changeMark(store.em(), ['tls']), publishedMark: () => mark, publish,
  });

  // Spec 1.2 rule 20: each node reads its files again every 30 s; a renewed pair is stored (the
  // certificate only) and every node reloads its doors, without restart. The placement rules are
  // judged again for the renewal's names: one that would answer a name another certificate placed
  // on its plane answers, or leave the internal plane without a name it is called by, is not
  // stored, and the last pair read goes on being presented (judged again at each read).
  const reread = async (): Promise<void> => {
    const rows = await store.em().find(CertificateRow, { source: 'file' });
    // Read once a turn, and only when a pair on disk changed.
    let placed: { placements: Loaded['placements']; certificates: Map<string, CertificateRow> } | null = null;
    let moved = false;
    for (const row of rows) {
      // Missing, or served from its last pair while the files disagree: said once, not every turn.
      const wasMissing = records.get(row.id)?.state === 'missing' || fromLastPair.has(row.id);
      let readable = false;
      try {
        const pair = readFilePair(row.certPath!, row.keyPath!);
        readable = true;
        if (pair.fingerprint === row.fingerprint) {
          if (heldBack.delete(row.id)) moved = true;
        } else {
          if (placed === null) {
            const loaded = await loadRows(store.em());
            placed = { placements: loaded.placements, certificates: new Map(loaded.rows.map((r) => [r.id, r])) };
          }
          const rule = renewalProblem(row.id, pair.names, placed.placements, placed.certificates, init.internalNames);
          const was = heldBack.get(row.id);
          if (rule !== null) {
            if (was?.rule !== rule || was.fingerprint !== pair.fingerprint) {
              heldBack.set(row.id, { rule, fingerprint: pair.fingerprint });
              moved = true;
              ctx.log.warn('file-system certificate renewed on disk breaks a placement rule; the last pair read is presented', { certificate: row.id, path: row.certPath, names: pair.names, rule });
            }
            continue;
          }
          heldBack.delete(row.id);
          moved = true;
          await retryBusy(() => store.em().transactional(async (em) => {
            await em.nativeUpdate(CertificateRow, { id: row.id }, {
              names: [...pair.names], issuer: pair.issuer, notBefore: pair.notBefore, notAfter: pair.notAfter,
              fingerprint: pair.fingerprint, certPem: pair.certPem, updatedAt: ctx.clock.now(),
            });
            em.create(Change, { kind: 'tls', at: ctx.clock.now() });
          }));
          ctx.log.info('file-system certificate changed on disk; doors reloaded', { certificate: row.id, path: row.certPath, notAfter: pair.notAfter });
        }
      } catch (err) {
        // The last certificate read stays stored; the record says the file is missing.
        if (!wasMissing) ctx.log.warn('file-system certificate cannot be read', { certificate: row.id, ...errorAttrs(err) });
      }
      // A pair that vanished, or came back, changes what this node presents.
      if (readable === wasMissing) moved = true;
    }
    if (moved) await publish();
  };
  const rereading = every(ctx.clock, FILE_REREAD_MS, reread, (err) => ctx.log.warn('file-system certificates could not be read again; the next turn tries again', errorAttrs(err)));

  const digest = startDigest({
    store, clock: ctx.clock, log: ctx.log, node: init.node, mail: init.mail, horizonDays: init.digestHorizonDays,
    records: () => [...records.values()],
  });

  // A new worker has no issuance in flight: answers an earlier one left posted are taken down.
  ctx.emit({ type: 'acme.challenge', change: { op: 'clear' } });
  const issuer = startAcmeIssuer({
    store, masterKey, clock: ctx.clock, log: ctx.log, licensed: init.licensed, publish,
    board: new RelayedChallenges((change) => ctx.emit({ type: 'acme.challenge', change })),
  });

  const deps: CertDeps = {
    store, masterKey, node: init.node, now: () => ctx.clock.now(), caller: () => ctx.caller(), publish,
    written: (rows) => ctx.emit({ type: 'audit.written', rows: [...rows] }),
    served: serving.served,
    dataDir: init.dataDir, internalNames: init.internalNames,
    record: (id) => records.get(id),
    acme: { licensed: init.licensed, request: issuer.request },
  };

  return {
    handlers: { ...certificateHandlers(deps), ...settingsHandlers(deps), ...doorHandlers(deps), ...acmeAuthorityHandlers(deps) },
    told: trafficTells(deps),
    stop: async () => {
      await issuer.stop();
      await rereading.stop();
      await digest.stop();
      await serving.stop();
      await follower.close();
      await store.close();
    },
  };
});
