/**
 * Every plane serves an exchange the same way around its own work: the request record is opened
 * first (while an observer listens), a refusal or a failure is answered as problem+json, and the
 * record is closed once the answer ended or the caller left. `serve` is created once per plane,
 * so nothing is allocated for this per request beyond the record itself.
 */
import { GatewayError } from '../http/errors.ts';
import type { Exchange } from '../http/exchange.ts';
import { sendFailure } from '../http/respond.ts';
import type { RequestRecord } from '../pipeline/request-record.ts';
import type { RelayEnd } from '../pipeline/upstream.ts';
import { errorAttrs } from '../log/logger.ts';
import type { GatewayContext } from './context.ts';
import type { Principal } from './principal.ts';

/**
 * What `serve` returns: nothing once the answer is over, a promise of its end, or RELAYED when it
 * handed the exchange to the relay with the plane's `relayEnd(gw)`, which closes the record then.
 */
export const RELAYED = Symbol('relayed');
export type RecordedHandler = (ex: Exchange, record: RequestRecord | undefined) => Promise<void> | void | typeof RELAYED;

/**
 * The end of a relayed answer for `serveRecorded`: a failure before anything was sent is answered,
 * and the record closed. Made once per plane; what it throws is logged, never thrown into the
 * upstream client that tells it.
 */
export function relayEnd(gw: GatewayContext): RelayEnd {
  return {
    relayEnded(ex, record, err) {
      try {
        if (err !== undefined) refused(gw, ex, record, err);
        else closed(gw, ex, record);
      } catch (thrown) {
        gw.log.error('the end of a relayed answer could not be handled', errorAttrs(thrown));
      }
    },
  };
}

/**
 * `answerOn` gives the exchange the plane answers on, when it adds to every answer (the data
 * plane's HSTS): refusals and failures go out through it too. Not an async function: a request
 * the pipeline refuses is answered in the same turn, and a relayed one is closed by the relay's
 * end (each promise and async frame on this path measured, bench/RESULTS.md).
 */
export function serveRecorded(gw: GatewayContext, ex: Exchange, serve: RecordedHandler, answerOn?: (ex: Exchange) => Exchange): Promise<void> | void {
  const record = gw.records.open(ex);
  const answering = answerOn === undefined ? ex : answerOn(ex);
  let pending: Promise<void> | void | typeof RELAYED;
  try {
    if (ex.lengthRequired) {
      throw new GatewayError('body.length-required', 'This address reads a request body only with its length stated (Content-Length); a chunked body is not read on the plain port. State the length, or send it to the HTTPS port, which takes chunked bodies.');
    }
    pending = serve(answering, record);
  } catch (err) {
    refused(gw, answering, record, err);
    return;
  }
  if (pending === RELAYED) return;
  if (pending === undefined) {
    closed(gw, answering, record);
    return;
  }
  return pending.then(() => closed(gw, answering, record), (err: unknown) => refused(gw, answering, record, err));
}

/**
 * A refusal or a failure, answered as problem+json unless an answer already began, then the
 * record closed. `answering` reads the door's own exchange underneath for its state.
 */
function refused(gw: GatewayContext, answering: Exchange, record: RequestRecord | undefined, err: unknown): void {
  if (record !== undefined) record.error = errorCode(err);
  if (!answering.responded) sendFailure(answering, err, gw.log);
  closed(gw, answering, record);
}

/** The code a record keeps for a refusal or a failure: the GatewayError's, else `internal`. */
export function errorCode(err: unknown): string {
  return err instanceof GatewayError ? err.code : 'internal';
}

function closed(gw: GatewayContext, ex: Exchange, record: RequestRecord | undefined): void {
  if (record !== undefined) gw.records.close(record, ex.aborted, ex.status);
}

/** Who called a gateway API, as the record names them: the account, and the token of a machine. */
export function notePrincipal(record: RequestRecord | undefined, p: Principal): Principal {
  if (record !== undefined && p.kind !== 'anonymous') {
    record.user = p.account?.name ?? null;
    record.token = p.kind === 'token' ? p.token.name : null;
  }
  return p;
}
