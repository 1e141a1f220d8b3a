/** CertActor, main-thread side: the typed handle, the view of what each plane presents. */
import type { Logger } from '../../log/logger.ts';
import type { Clock } from '../../clock/clock.ts';
import { ActorHost } from '../../workers/supervisor.ts';
import { siblingModule } from '../../workers/spawn.ts';
import type { StoreOptions } from '../../store/orm.ts';
import type { AuditRow } from '../../store/audit.ts';
import type { CertCalls, CertEvent, CertInit, CertTells } from './messages.ts';
import { TlsView } from './view.ts';
import { AcmeChallenges } from '../../core/tls/acme-challenges.ts';
import { applyChallenge } from './challenge-relay.ts';

/** A console caller is told to the actor at most this often per door, unless the peer changes. */
const TRAFFIC_EVERY_MS = 1000;

export class CertClient {
  readonly view: TlsView;
  /** ACME answers in flight, posted by the actor's issuer; the doors serve them. */
  readonly challenges = new AcmeChallenges();
  readonly host: ActorHost<CertCalls, CertInit, CertEvent, CertTells>;
  readonly #told = new Map<string, { peer: string; at: number }>();
  readonly #clock: Clock;

  constructor(opts: {
    store: StoreOptions; log: Logger; clock: Clock; masterKey: Buffer; node: string; dataDir: string;
    internalNames: readonly string[]; pollMs?: number;
    mail: CertInit['mail']; digestHorizonDays: number;
    onAuditWritten?: (rows: readonly AuditRow[]) => void;
    /** ACME issuance (licensed edition); off, orders are kept and never asked. */
    licensed?: boolean;
  }) {
    this.#clock = opts.clock;
    this.view = new TlsView((id, reason) => opts.log.error('a placed certificate cannot be presented: OpenSSL refuses it; it is left out until replaced', { certificate: id, reason }));
    this.host = new ActorHost<CertCalls, CertInit, CertEvent, CertTells>({
      name: 'certs',
      background: true,
      module: siblingModule(import.meta.url, './actor.ts'),
      init: () => ({
        store: opts.store, masterKey: opts.masterKey.toString('base64'), node: opts.node, dataDir: opts.dataDir,
        internalNames: opts.internalNames, pollMs: opts.pollMs ?? 1000, mail: opts.mail, digestHorizonDays: opts.digestHorizonDays,
        licensed: opts.licensed ?? false,
      }),
      log: opts.log,
      clock: opts.clock,
      onEvent: (event) => {
        if (event.type === 'audit.written') opts.onAuditWritten?.(event.rows);
        else if (event.type === 'acme.challenge') applyChallenge(this.challenges, event.change);
        else this.view.apply(event.snapshot);
      },
    });
  }

  start(): Promise<void> { return this.host.start(); }
  stop(): Promise<void> { return this.host.stop(); }
  call: ActorHost<CertCalls, CertInit, CertEvent, CertTells>['call'] = (type, args, caller) => this.host.call(type, args, caller);

  /** A console call (probes excluded) came through `door` from `peer` (spec 1.2 rule 7). */
  consoleTraffic(door: 'http' | 'https', peer: string): void {
    const at = this.#clock.now();
    const last = this.#told.get(door);
    if (last && last.peer === peer && at - last.at < TRAFFIC_EVERY_MS) return;
    this.#told.set(door, { peer, at });
    this.host.tell('tls.traffic', { door, peer, at });
  }
}
