/**
 * A certificate's state as time moves it (no ORM here: the control plane's main thread reads it
 * for every answer).
 */
import { NOT_BEFORE_SKEW_S } from '../../core/tls/choose.ts';
import type { CertRecord, CertState } from './messages.ts';

const EXPIRED_DETAIL = 'expired: it is still presented where nothing valid carries the name asked';

function notYetValidDetail(notBefore: number): string {
  return `valid from ${new Date(notBefore * 1000).toISOString()}: clients refuse it until then, so it is presented only where nothing valid carries the name asked`;
}

/**
 * A record's state at `nowS`: the state built at the last publish moves with time between active,
 * expired and not yet valid (nothing republishes when a certificate's end passes). A start is
 * "not yet" only past NOT_BEFORE_SKEW_S: clocks disagree, and a test clock stands still.
 */
export function stateAt(r: Pick<CertRecord, 'state' | 'detail' | 'notBefore' | 'notAfter'>, nowS: number): { state: CertState; detail: string | null } {
  if (r.state !== 'active' && r.state !== 'expired' && r.state !== 'not-yet-valid') return { state: r.state, detail: r.detail };
  if (r.notAfter !== null && r.notAfter <= nowS) return { state: 'expired', detail: EXPIRED_DETAIL };
  if (r.notBefore !== null && r.notBefore > nowS + NOT_BEFORE_SKEW_S) return { state: 'not-yet-valid', detail: notYetValidDetail(r.notBefore) };
  return { state: 'active', detail: r.state === 'active' ? r.detail : null };
}
