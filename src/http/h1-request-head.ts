/**
 * The head of a request the HTTPS doors serve themselves (tls-h1-connection.ts): HTTP/1.1 or 1.0, a
 * known method, a path in origin form, no body or one of a stated length or in chunks (1.1 only),
 * no upgrade, no expectation but 100-continue. Anything else, or anything that could be read two ways, is not refused here but
 * left to node:http, which then serves the rest of the connection with its own strict parser
 * (llhttp) and its own refusals: this reader only ever says "mine" for a head both would read the
 * same, or "not mine".
 */
import { METHODS } from 'node:http';
import { hasToken, isFieldValue, isRequestTarget, isToken } from './grammar.ts';
import { headerRecord } from './header-record.ts';

/** More lines than a client sends: such a head goes to node:http. */
const MAX_LINES = 200;

/** CONNECT's target is an authority, not a path: node:http's. */
const PLAIN_METHODS: ReadonlySet<string> = new Set(METHODS.filter((m) => m !== 'CONNECT'));

export interface PlainHead {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  /** Lower-case names; a repeated header joined to the first with ", " (cookies with "; "), as every door does. */
  readonly headers: Record<string, string>;
  /** The body's stated length (0: none, or chunked). */
  readonly length: number;
  /** The body comes in chunks (`Transfer-Encoding: chunked`, alone). */
  readonly chunked: boolean;
  /** The client waits for `100 Continue` before it sends the body (RFC 9110 10.1.1). */
  readonly expectsContinue: boolean;
  /**
   * The connection closes after this answer: an HTTP/1.1 client asked (`Connection: close`), or an
   * HTTP/1.0 client did not ask to keep it (`Connection: keep-alive`).
   */
  readonly close: boolean;
  /** The request came as HTTP/1.0: its answer is never in chunks, Via names that version. */
  readonly http10: boolean;
}

/** One Content-Length, as digits: two lines (joined "5, 5") or anything else is node:http's to judge. */
const LENGTH = /^[0-9]{1,15}$/;

const isOws = (c: number): boolean => c === 32 || c === 9;

/**
 * The head in `text` (latin1, without the blank line that ends it), or null when it is not one
 * this door serves itself.
 */
export function readPlainHead(text: string): PlainHead | null {
  let eol = text.indexOf('\r\n');
  if (eol < 0) eol = text.length;
  const sp1 = text.indexOf(' ');
  if (sp1 <= 0 || sp1 >= eol) return null;
  const method = text.slice(0, sp1);
  if (!PLAIN_METHODS.has(method)) return null;
  const sp2 = text.indexOf(' ', sp1 + 1);
  if (sp2 < 0 || sp2 >= eol || eol - sp2 !== 9 || !text.startsWith('HTTP/1.', sp2 + 1)) return null;
  const minor = text.charCodeAt(sp2 + 8);
  if (minor !== 0x31 && minor !== 0x30) return null;
  const http10 = minor === 0x30;
  const target = text.slice(sp1 + 1, sp2);
  // Origin form only, visible ASCII, no fragment: absolute and asterisk forms are node:http's.
  if (target.charCodeAt(0) !== 0x2f || !isRequestTarget(target) || target.includes('#')) return null;
  const headers = headerRecord();
  let lines = 0;
  let at = eol + 2;
  while (at < text.length) {
    if (++lines > MAX_LINES) return null;
    let end = text.indexOf('\r\n', at);
    if (end < 0) end = text.length;
    // A folded line, or one with no name.
    if (isOws(text.charCodeAt(at))) return null;
    const colon = text.indexOf(':', at);
    if (colon <= at || colon >= end) return null;
    const raw = text.slice(at, colon);
    if (!isToken(raw)) return null;
    const name = raw.toLowerCase();
    let from = colon + 1;
    let to = end;
    while (from < to && isOws(text.charCodeAt(from))) from++;
    while (to > from && isOws(text.charCodeAt(to - 1))) to--;
    // A control character (a bare CR or LF among them) in a value: node:http judges it.
    if (!isFieldValue(text, from, to)) return null;
    const value = text.slice(from, to);
    const had = headers[name];
    headers[name] = had === undefined ? value : `${had}${name === 'cookie' ? '; ' : ', '}${value}`;
    at = end + 2;
  }
  // A length that is not one number, a coding other than chunked alone, both at once (RFC 9112
  // 6.3: the classic smuggling pair), an upgrade, an expectation, or no Host: node:http's.
  const length = headers['content-length'];
  const coding = headers['transfer-encoding'];
  if (length !== undefined && (coding !== undefined || !LENGTH.test(length))) return null;
  const chunked = coding !== undefined && coding.toLowerCase() === 'chunked';
  // HTTP/1.0 has no transfer codings (RFC 9112 6.1): such a head is node:http's to judge.
  if (coding !== undefined && (!chunked || http10)) return null;
  // An expectation other than 100-continue is answered 417 by node:http. An HTTP/1.0 client's
  // 100-continue is ignored (RFC 9110 10.1.1): it sends its body without waiting.
  const expect = headers['expect'];
  const continues = expect !== undefined && expect.toLowerCase() === '100-continue';
  // HTTP/1.1 requires a Host (RFC 9112 3.2); HTTP/1.0 predates it.
  if (headers['upgrade'] !== undefined || (expect !== undefined && !continues) || (headers['host'] === undefined && !http10)) return null;
  const connection = headers['connection'];
  if (connection !== undefined && hasToken(connection, 'upgrade')) return null;
  const q = target.indexOf('?');
  return {
    method,
    path: q === -1 ? target : target.slice(0, q),
    query: q === -1 ? '' : target.slice(q + 1),
    headers,
    length: length === undefined ? 0 : Number(length),
    chunked,
    expectsContinue: continues && !http10,
    close: http10
      ? connection === undefined || !hasToken(connection, 'keep-alive') || hasToken(connection, 'close')
      : connection !== undefined && hasToken(connection, 'close'),
    http10,
  };
}
