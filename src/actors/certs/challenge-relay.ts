/**
 * The ACME answers cross from the certificate actor's worker, where the issuer runs, to the main
 * thread, where the doors serve them: the worker's board relays each change as an event, and the
 * main thread applies it to its `AcmeChallenges` board.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { AcmeChallenges, AlpnAnswer, ChallengeBoard } from '../../core/tls/acme-challenges.ts';
import type { ChallengeChange } from './messages.ts';

/**
 * An event is one-way: the worker cannot know when the main thread has applied it. The issuer
 * tells the authority to validate as soon as `add…` returns, and the authority's request then
 * reaches the main thread on a socket. The main thread takes worker messages and socket reads
 * from the same event loop, in no promised order once both are ready, and a busy turn delays
 * both; so each add waits this long before returning, far above one turn of a loaded loop and
 * far below what an authority takes to validate (hundreds of milliseconds at the least). A
 * request that still came first would be answered 404 and the order refused with the
 * authority's reason, never served a wrong answer.
 */
export const POSTED_MS = 25;

/** The worker's board: every change goes to the main thread as an `acme.challenge` event. */
export class RelayedChallenges implements ChallengeBoard {
  constructor(private readonly send: (change: ChallengeChange) => void) {}

  async addHttp01(token: string, keyAuthorization: string): Promise<void> {
    this.send({ op: 'add-http01', token, keyAuthorization });
    await delay(POSTED_MS);
  }

  removeHttp01(token: string): void {
    this.send({ op: 'remove-http01', token });
  }

  async addAlpn01(name: string, answer: AlpnAnswer): Promise<void> {
    this.send({ op: 'add-alpn01', name, answer });
    await delay(POSTED_MS);
  }

  removeAlpn01(name: string, answer: AlpnAnswer): void {
    this.send({ op: 'remove-alpn01', name, answer });
  }
}

/** The main thread's side: one relayed change applied to the board the doors read. */
export function applyChallenge(board: AcmeChallenges, change: ChallengeChange): void {
  switch (change.op) {
    case 'add-http01': board.addHttp01(change.token, change.keyAuthorization); break;
    case 'remove-http01': board.removeHttp01(change.token); break;
    case 'add-alpn01': board.addAlpn01(change.name, change.answer); break;
    case 'remove-alpn01': {
      // The answer crossed the thread as a copy: the one posted is recognised by its certificate.
      const posted = board.alpn01(change.name);
      if (posted !== undefined && posted.cert === change.answer.cert) board.removeAlpn01(change.name, posted);
      break;
    }
    case 'clear': board.clear(); break;
  }
}
