import type { Logger } from '../log/logger.ts';
import { GatewayError, problemOf } from './errors.ts';
import type { Exchange, OutgoingHeaders } from './exchange.ts';
import { isUtf8 } from 'node:buffer';
import { storeUnavailable } from '../store/unavailable.ts';
import { jsonBodyProblem, repeatedKeyProblem } from './json-body.ts';
import type { ApiReply, Router, RequestContext, RouteDoc } from './router.ts';

const API_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const;
/** API bodies are small; a larger one is refused before it is read. */
export const API_BODY_LIMIT = 1024 * 1024;

export function sendJson(ex: Exchange, status: number, body: unknown, headers: OutgoingHeaders = {}): void {
  const payload = status === 204 || body === undefined ? undefined : JSON.stringify(body);
  ex.send(status, {
    ...API_HEADERS,
    ...(payload !== undefined ? { 'content-type': 'application/json; charset=utf-8' } : {}),
    ...headers,
  }, payload);
}

export function sendProblem(ex: Exchange, err: GatewayError, headers: OutgoingHeaders = {}): void {
  const extra: Record<string, string | readonly string[]> = { ...headers };
  const retry = err.extra?.retryAfter;
  if (typeof retry === 'number') extra['retry-after'] = String(retry);
  // What to upgrade to, and the one version of the WebSocket protocol spoken (RFC 6455 4.4).
  if (err.code === 'upgrade-required') Object.assign(extra, { upgrade: 'websocket', 'sec-websocket-version': '13' });
  // A 401 names the scheme that would open the door (RFC 9110 11.6.1, RFC 6750 3).
  if (err.code === 'unauthenticated') extra['www-authenticate'] = 'Bearer realm="meerkat"';
  ex.send(err.status, {
    ...API_HEADERS,
    'content-type': 'application/problem+json; charset=utf-8',
    ...extra,
  }, JSON.stringify(problemOf(err)));
}

/** Anything thrown that is not a refusal is our bug: log it whole, tell the caller little. */
export function sendFailure(ex: Exchange, err: unknown, log: Logger): void {
  if (err instanceof GatewayError) {
    sendProblem(ex, err);
    return;
  }
  // A caller that left mid-body fails the reading of its body: its own doing, not the gateway's
  // fault, and no one is left to answer. Said at debug, without a stack, so such callers cannot
  // flood the operational log with errors.
  if (ex.aborted) {
    log.debug('request ended: the caller left', { plane: ex.plane, method: ex.method, path: ex.path, error: err instanceof Error ? err.message : String(err) });
    return;
  }
  if (storeUnavailable(err)) {
    log.warn('request refused: the database cannot take it now', { plane: ex.plane, method: ex.method, path: ex.path, error: (err as Error).message });
    if (!ex.responded) sendProblem(ex, new GatewayError('store.unavailable', undefined, undefined, { retryAfter: 5 }));
    return;
  }
  log.error('request failed', {
    plane: ex.plane, method: ex.method, path: ex.path,
    error: err instanceof Error ? err.stack ?? err.message : String(err),
  });
  if (!ex.responded) sendProblem(ex, new GatewayError('internal'));
}

/** Reads a JSON body: refuses another media type, malformed JSON and oversized bodies. */
export async function readJson(ex: Exchange, limit = API_BODY_LIMIT): Promise<unknown> {
  const raw = await ex.readBody(limit);
  if (raw.length === 0) return undefined;
  const type = (ex.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new GatewayError('body.media-type', `Send the body as application/json (got "${type || 'no content type'}").`);
  }
  // RFC 8259 asks for UTF-8: a byte that is not would become U+FFFD and be stored as something
  // the caller never sent.
  if (!isUtf8(raw)) throw new GatewayError('body.invalid-json', 'The request body is not valid UTF-8, which JSON must be written in.');
  let value: unknown;
  const text = raw.toString('utf8');
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    throw new GatewayError('body.invalid-json', `The request body is not valid JSON${jsonFault(err)}.`);
  }
  const problem = repeatedKeyProblem(text) ?? jsonBodyProblem(value);
  if (problem) throw new GatewayError('field.invalid', problem.detail, problem.field);
  return value;
}

/**
 * What the parser found wrong, without quoting the body: some of V8's messages carry up to ten
 * characters around the fault (`Unexpected token 's', ..."password":s3cret-pas"... is not valid
 * JSON`), and a password or a vault value typed there would come back in the answer. Those are
 * left out; the others say what and where, and hold no text of the body.
 */
export function jsonFault(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  return message === '' || message.includes('"') ? '' : `: ${message}`;
}

/**
 * Routes an exchange through `router`: 405 answered here, and false when nothing matches so the
 * plane can answer its own 404. `authenticate` sees the route's doc (who may call it).
 */
export async function serveApi<P>(router: Router<P>, ex: Exchange, authenticate: (doc: RouteDoc) => P | Promise<P>): Promise<boolean> {
  const match = router.match(ex.method, ex.path);
  if (match.kind === 'none') return false;
  if (match.kind === 'method') {
    const allowed = [...new Set(match.allowed.includes('GET') ? [...match.allowed, 'HEAD'] : match.allowed)];
    sendProblem(ex, new GatewayError('method-not-allowed', `${ex.method} is not accepted here; use ${allowed.join(', ')}.`), { allow: allowed.join(', ') });
    return true;
  }
  const principal = await authenticate(match.route.doc);
  const query = new URLSearchParams(ex.query);
  // URLSearchParams turns bytes that are not UTF-8 into U+FFFD: a filter would then match, or a
  // name be stored, as something the caller never wrote.
  const notUtf8 = ex.query === '' ? undefined : ex.query.split('&').find((part) => !decodesAsUtf8(part));
  if (notUtf8 !== undefined) {
    const name = notUtf8.split('=')[0]!.slice(0, 100);
    throw new GatewayError('field.invalid', `The query parameter ${name} holds percent-encoded bytes that are not UTF-8.`, name);
  }
  // No store keeps a NUL in text, and no name or filter needs one: refused before any handler sees it.
  for (const [name, value] of [...Object.entries(match.params), ...query]) {
    if (value.includes('\u0000') || name.includes('\u0000')) throw new GatewayError('field.invalid', `${name.replaceAll('\u0000', '%00')} holds a NUL character (%00).`, name.replaceAll('\u0000', '%00'));
  }
  let parsed: { value: unknown } | undefined;
  const ctx: RequestContext<P> = {
    ex,
    params: match.params,
    query,
    principal,
    json: async () => {
      parsed ??= { value: await readJson(ex) };
      return parsed.value;
    },
  };
  const reply: ApiReply = await match.route.handler(ctx);
  if (ex.responded) return true;
  if (reply.stream !== undefined) await sendStream(ex, reply.status ?? 200, { ...API_HEADERS, ...reply.headers }, reply.stream);
  else if (reply.raw !== undefined) ex.send(reply.status ?? 200, { ...API_HEADERS, ...reply.headers }, reply.raw);
  else sendJson(ex, reply.status ?? 200, reply.body, reply.headers);
  return true;
}

function decodesAsUtf8(part: string): boolean {
  if (!part.includes('%')) return true;
  try {
    // A % without two hex digits is kept as written, by URLSearchParams as here.
    decodeURIComponent(part.replace(/%(?![0-9a-fA-F]{2})/g, '%25'));
    return true;
  } catch {
    return false;
  }
}

/** Writes each piece as it comes, waiting while the caller reads slowly; stops when the caller left. */
async function sendStream(ex: Exchange, status: number, headers: OutgoingHeaders, pieces: AsyncIterable<string>): Promise<void> {
  ex.writeHead(status, headers);
  try {
    for await (const piece of pieces) {
      if (ex.aborted) return;
      if (!ex.write(Buffer.from(piece, 'utf8'))) await ex.drained();
    }
  } catch (err) {
    // The head is out: an answer broken off half-way can only end with a cut connection.
    ex.abort();
    throw err;
  }
  ex.end();
}
