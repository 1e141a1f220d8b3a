/**
 * A scheduled call through the front door's pipeline (spec 1.1): the route's rules, endpoint
 * rules, organisation and hours read the scheduler's identity with the schedule's roles, as they
 * read anybody's; identity reaches the service as the route declares; no token is on the wire.
 * Every outcome comes back as a status and the sentence a person reads.
 */
import { STATUS_CODES } from 'node:http';
import type { ConfigView } from '../actors/config/client.ts';
import type { CallOutcome, ScheduledCall } from '../actors/schedules/messages.ts';
import { GatewayError } from '../http/errors.ts';
import type { Identity } from '../core/model.ts';
import { authorise } from './admit.ts';
import { identityHeaders } from './identity.ts';
import { upstreamFailure, type UpstreamPools } from './upstream.ts';

/** The fixed identity scheduled calls act under (not an account). */
export const SCHEDULER_USER = 'scheduler';
const DETAIL_LIMIT = 500;

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

function bodyOf(call: ScheduledCall): { body: string | undefined; type: string | undefined } {
  if (call.body === null) return { body: undefined, type: call.contentType ?? undefined };
  const v = call.body.value;
  // A string goes as its content (text/plain); anything else as JSON. An explicit type wins.
  if (typeof v === 'string') return { body: v, type: call.contentType ?? 'text/plain; charset=utf-8' };
  return { body: JSON.stringify(v), type: call.contentType ?? 'application/json' };
}

export async function makeScheduledCall(view: ConfigView, pools: UpstreamPools, call: ScheduledCall, now: number): Promise<CallOutcome> {
  const reasons = STATUS_CODES;
  const done = (status: number, detail: string, retryAfterS?: number): CallOutcome => ({
    scheduleId: call.scheduleId, runId: call.runId, attempt: call.attempt, status, detail, ...(retryAfterS !== undefined ? { retryAfterS } : {}),
  });
  const route = view.routesById.get(call.routeId);
  if (!route) return done(404, `404 Not Found: the route "${call.routeId}" no longer exists.`);
  const match = view.routeTable.match(route.hosts[0], call.path.split('?')[0]!);
  if (!match || match.route.id !== route.id) return done(404, `404 Not Found: the route "${route.id}" no longer serves ${call.path}.`);
  const identity: Identity = { user: SCHEDULER_USER, roles: view.roles.expand(call.roles), organisation: call.organisation };
  try {
    authorise(view, route, identity, call.method, match.servicePath, now);
  } catch (err) {
    if (err instanceof GatewayError) return done(err.status, `${err.status} ${reasons[err.status] ?? ''}: ${err.detail}`.replace(' :', ':'));
    throw err;
  }
  const signer = view.signer;
  if (route.identity === 'jwt' && !signer) return done(503, '503 Service Unavailable: this node cannot unseal the identity signing key.');
  const { body, type } = bodyOf(call);
  const host = route.hosts[0] ?? 'localhost';
  const headers: Record<string, string> = {
    ...call.headers,
    ...identityHeaders(route.identity, identity, signer!, `https://${host}`, now),
    'gateway-job': call.scheduleId,
    'gateway-job-run': call.runId,
    'gateway-job-attempt': String(call.attempt),
    ...(type ? { 'content-type': type } : {}),
  };
  const origin = view.origins.get(route.id)!;
  const query = call.path.includes('?') ? call.path.slice(call.path.indexOf('?')) : '';
  try {
    const res = await pools.get(origin).request({
      method: call.method as 'POST', path: match.upstreamPath + query, headers, body: body ?? null,
      headersTimeout: call.timeoutMs, bodyTimeout: call.timeoutMs,
    });
    const text = (await res.body.text()).slice(0, 64 * 1024);
    const retry = Number(res.headers['retry-after']);
    return done(res.statusCode, humanDetail(res.statusCode, reasons[res.statusCode] ?? '', text, res.headers['content-type'] as string | undefined), Number.isFinite(retry) ? retry : undefined);
  } catch (err) {
    const refusal = upstreamFailure(err, { origin, timeoutMs: call.timeoutMs });
    return done(refusal.status, `${refusal.status} ${reasons[refusal.status] ?? ''}: ${refusal.detail}`);
  }
}
