/**
 * A scheduled call through the front door's pipeline (spec 1.1): the same core as a data-plane
 * request (pass.ts), with the scheduler's identity posed instead of a credential presented, and
 * the collecting ending instead of the relaying one. The route's rules, endpoint rules,
 * organisation and hours read the schedule's roles as they read anybody's; the schedule's
 * headers go through the same header rules as a caller's (identity, forwarding and hop-by-hop
 * headers never pass); identity reaches the service as the route declares; no token is on the
 * wire. Every outcome comes back as a status and the sentence a person reads.
 */
import { performance } from 'node:perf_hooks';
import { GATEWAY_COOKIES } from '../http/gateway-headers.ts';
import { withoutEchoes } from '../core/vault/echoes.ts';
import { STATUS_CODES } from 'node:http';
import type { ConfigView } from '../actors/config/client.ts';
import type { CallOutcome, ScheduledCall } from '../actors/schedules/messages.ts';
import { GatewayError } from '../http/errors.ts';
import { headerRecord } from '../http/header-record.ts';
import { collect } from './collect.ts';
import { pass } from './pass.ts';
import type { Clock } from '../clock/clock.ts';
import { MAX_RESOLVED } from '../core/vault/references.ts';
import type { UpstreamPools } from './upstream.ts';
import type { RequestRecord, RequestRecords } from './request-record.ts';

const DETAIL_LIMIT = 500;
/** What is read of an answer at most: enough for a sentence, never a whole file. */
export const ANSWER_LIMIT = 64 * 1024;

/** An answer's text cut to what a person reads: markup and whitespace go, the first sentences stay. */
export function humanDetail(status: number, reason: string, text: string, contentType: string | undefined): string {
  let body = text;
  if (/html|xml/i.test(contentType ?? '') || /^\s*</.test(body)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(body)?.[1];
    const main = body.replace(/<(script|style|head)[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]+>/g, ' ');
    body = [title, main].filter(Boolean).join(' ');
  }
  body = body.replace(/&nbsp;/g, ' ').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/\s+/g, ' ').trim();
  const line = `${status} ${reason}`.trim();
  if (!body) return line;
  const cut = body.length > DETAIL_LIMIT ? `${body.slice(0, DETAIL_LIMIT - 1)}…` : body;
  return `${line}: ${cut}`;
}

/** Retry-After as seconds from now: a number of seconds, or an HTTP date (RFC 9110 10.2.3). */
export function retryAfterSeconds(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, Math.round((at - now) / 1000)) : undefined;
}

function bodyOf(call: ScheduledCall): { body: string | undefined; type: string | undefined } {
  if (call.body === null) return { body: undefined, type: call.contentType ?? undefined };
  const v = call.body.value;
  // A string goes as its content (text/plain); anything else as JSON. An explicit type wins.
  if (typeof v === 'string') return { body: v, type: call.contentType ?? 'text/plain; charset=utf-8' };
  return { body: JSON.stringify(v), type: call.contentType ?? 'application/json' };
}

/**
 * The schedule's headers under lower-case names, as a caller's arrive: the pipeline drops what
 * only the gateway writes, the job headers among them, which go on once it has (jobHeaders).
 */
function headersOf(call: ScheduledCall, type: string | undefined): Record<string, string> {
  const out = headerRecord();
  for (const [name, value] of Object.entries(call.headers)) out[name.toLowerCase()] = value;
  // The gateway frames the body itself; a stored length could only be wrong.
  delete out['content-length'];
  // A Content-Type among the headers is as explicit as `contentType`: it beats the body's own type.
  if (type !== undefined && (call.contentType !== null || out['content-type'] === undefined)) out['content-type'] = type;
  return out;
}

/** What each call carries (spec 1.1 rule 10), written over whatever else is there. */
function jobHeaders(headers: Record<string, string>, call: ScheduledCall): void {
  headers['gateway-job'] = call.scheduleId;
  headers['gateway-job-run'] = call.runId;
  headers['gateway-job-attempt'] = String(call.attempt);
}

export interface CallHooks {
  /** The request has left and the answer has not begun. */
  readonly onSent?: () => void;
  /** The issuer of signed identities when the application's public names are declared. */
  readonly issuer?: string | undefined;
  /** The request records: a scheduled call has one, like a caller's request (access log, metrics). */
  readonly records?: RequestRecords | undefined;
  /** The gateway's clock: the call's `timeout` is a deadline on it (collect.ts). */
  readonly clock?: Clock | undefined;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The call's record, named after its schedule; no client address: the gateway itself calls. */
function openRecord(records: RequestRecords | undefined, call: ScheduledCall, now: number): RequestRecord | undefined {
  const query = call.path.indexOf('?');
  const record = records?.open({
    plane: 'internal', method: call.method, path: query < 0 ? call.path : call.path.slice(0, query), query: query < 0 ? '' : call.path.slice(query + 1),
    headers: NO_HEADERS, remoteAddress: '', secure: false, receivedAt: now, receivedMono: performance.now(),
  });
  if (record !== undefined) record.schedule = call.scheduleId;
  return record;
}

export async function makeScheduledCall(view: ConfigView, pools: UpstreamPools, call: ScheduledCall, now: number, hooks: CallHooks = {}): Promise<CallOutcome> {
  const record = openRecord(hooks.records, call, now);
  let status = 0;
  try {
    const outcome = await callThrough(view, pools, call, now, hooks, record);
    status = outcome.status;
    return outcome;
  } finally {
    if (record !== undefined) hooks.records!.close(record, false, status);
  }
}

async function callThrough(view: ConfigView, pools: UpstreamPools, call: ScheduledCall, now: number, hooks: CallHooks, record: RequestRecord | undefined): Promise<CallOutcome> {
  const done = (status: number, detail: string, extra: Partial<Pick<CallOutcome, 'retryAfterS' | 'stopped'>> = {}): CallOutcome => ({
    scheduleId: call.scheduleId, runId: call.runId, attempt: call.attempt, status, detail: withoutSecrets(detail, call.secrets), ...extra,
  });
  const sentence = (err: GatewayError) => `${err.status} ${STATUS_CODES[err.status] ?? ''}: ${err.detail}`.replace(' :', ':');
  const route = view.routesById.get(call.routeId);
  const { body, type } = bodyOf(call);
  const query = call.path.indexOf('?');
  let upstream;
  try {
    if (call.oversized !== undefined) {
      throw new GatewayError('schedule.headers-too-large', `With the vault values it names, the header ${call.oversized} takes this call's headers past ${MAX_RESOLVED / 1024} KiB; nothing was sent. Name fewer or shorter values.`);
    }
    if (call.unsealable !== undefined && call.unsealable.length > 0) {
      const names = call.unsealable.join(', ');
      throw new GatewayError('vault.unsealable', `The vault value${call.unsealable.length > 1 ? 's' : ''} ${names} named by this schedule's headers cannot be opened with this node's vault master key; nothing was sent.`);
    }
    ({ upstream } = pass(view, pools, {
      method: call.method,
      // The call is made under the route's first name: the issuer of a signed identity follows it.
      host: route?.hosts[0],
      path: query < 0 ? call.path : call.path.slice(0, query),
      query: query < 0 ? '' : call.path.slice(query + 1),
      headers: headersOf(call, type),
      client: null,
      who: { kind: 'posed', routeId: call.routeId, roles: call.roles, organisation: call.organisation, tokenId: call.tokenId },
      // Refused where the schedule is written; stripped here too, for a row written before that.
      ownCookies: GATEWAY_COOKIES,
      timeoutMs: call.timeoutMs,
      ...(hooks.issuer !== undefined ? { issuer: hooks.issuer } : {}),
    }, now, record));
    jobHeaders(upstream.headers, call);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    if (record !== undefined) record.error = err.code;
    return done(err.status, sentence(err), err.code === 'token.revoked' ? { stopped: 'token-revoked' } : {});
  }
  try {
    const answer = await collect(upstream, { body, limit: ANSWER_LIMIT, ...(hooks.onSent ? { onSent: hooks.onSent } : {}), ...(hooks.clock ? { clock: hooks.clock } : {}) });
    if (record !== undefined) record.upstreamAnswered = true;
    const retryAfterS = retryAfterSeconds(answer.headers['retry-after'], now);
    const contentType = answer.headers['content-type'];
    return done(
      answer.status,
      // Masked before the sentence is made too: collapsing white space and stripping tags may split a value.
      humanDetail(answer.status, STATUS_CODES[answer.status] ?? '', withoutSecrets(answer.text, call.secrets), Array.isArray(contentType) ? contentType[0] : contentType),
      retryAfterS !== undefined ? { retryAfterS } : {},
    );
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    if (record !== undefined) record.error = err.code;
    return done(err.status, sentence(err));
  }
}

/**
 * The detail as stored and shown: each vault value the call's headers took is written as the
 * reference that named it, in every form a service may echo it (core/vault/echoes.ts). A service
 * that echoes a header, or an error quoting a key, must not put the secret in the run's history.
 */
function withoutSecrets(detail: string, secrets: ScheduledCall['secrets']): string {
  return secrets === undefined || secrets.length === 0 ? detail : withoutEchoes(detail, secrets);
}
