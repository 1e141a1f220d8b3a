/**
 * The canonical form of a request path, shared by the data plane (each request) and the
 * scheduling API (each schedule, at write time), so a path judged when written is the path
 * routed when called, and the path the service is sent is the one the rules judged.
 *
 * - Repeated slashes are merged (as nginx does by default), so `/orders//7` meets the rule
 *   written for `/orders/{id}`.
 * - An escaped unreserved character (RFC 3986 6.2.2.2: letters, digits, `-._~`) is decoded:
 *   `/%61dmin` is `/admin` to every service, so it is `/admin` to the routes and rules too.
 * - There is no canonical form for a path a service could read as another one than the routes
 *   see: a `.` or `..` segment (also escaped, or carrying `;` parameters, which servlet containers
 *   strip, or ending at an escaped slash, which some services decode before they split), a backslash or an escaped one (servers on Windows and URL parsers that follow the
 *   WHATWG rules read it as `/`), a `#` (parsers drop what follows it), an escaped NUL (C
 *   servers end the path there); and what HTTP/1.1 cannot carry in a request target (a space, a
 *   control character, DEL, a character outside ASCII), which the call to the service would refuse.
 */

/** Why a path has no canonical form, for the sentences of its refusals. */
export const NOT_CANONICAL = 'a "." or ".." segment (also percent-encoded, or followed by ";"), a segment of ";" parameters alone, a backslash (also %5C), a "#", %00, a space, a control character or a character outside printable ASCII (percent-encode it)';

const PERCENT = 37;
const DOT = 46;
const SLASH = 47;
const BACKSLASH = 92;
const HASH = 35;
const SEMICOLON = 59;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function isUnreserved(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e;
}

/** `%XX` escapes of unreserved characters decoded, the others kept as written; undefined for %5C or %00. */
function decodeUnreserved(path: string): string | undefined {
  let out = '';
  let from = 0;
  for (let i = path.indexOf('%'); i >= 0 && i + 2 < path.length; i = path.indexOf('%', i + 1)) {
    const hi = hexValue(path.charCodeAt(i + 1));
    const lo = hexValue(path.charCodeAt(i + 2));
    // A malformed escape is the service's to refuse; it cannot be one of the characters below.
    if (hi < 0 || lo < 0) continue;
    const code = hi * 16 + lo;
    if (code === BACKSLASH || code === 0) return undefined;
    if (!isUnreserved(code)) continue;
    out += path.slice(from, i) + String.fromCharCode(code);
    from = i + 3;
    i += 2;
  }
  return from === 0 ? path : out + path.slice(from);
}

/** A `.` or `..` segment, also with `;` parameters, or parameters with no segment before them. */
function isAmbiguousSegment(path: string, start: number, end: number): boolean {
  const semi = path.indexOf(';', start);
  const stop = semi >= 0 && semi < end ? semi : end;
  const n = stop - start;
  if (n === 0) return stop < end;
  return (n === 1 && path.charCodeAt(start) === DOT) || (n === 2 && path.charCodeAt(start) === DOT && path.charCodeAt(start + 1) === DOT);
}

/**
 * `raw` (percent-encoded, no query) in its canonical form, or undefined when it has none (see
 * above). Returns `raw` itself when it is already canonical.
 */
export function canonicalForm(raw: string): string | undefined {
  // One look at every character: most paths hold none of these and are returned as they are.
  let escapes = false;
  let dots = false;
  let doubled = false;
  let params = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === PERCENT) escapes = true;
    else if (c === DOT) dots = true;
    else if (c === SLASH) doubled ||= i > 0 && raw.charCodeAt(i - 1) === SLASH;
    else if (c === SEMICOLON) params = true;
    else if (c === BACKSLASH || c === HASH || c < 0x21 || c > 0x7e) return undefined;
  }
  if (!escapes && !dots && !doubled && !params) return raw;
  let path: string | undefined = raw;
  if (escapes) {
    path = decodeUnreserved(path);
    if (path === undefined) return undefined;
    // A decoded dot is a dot.
    dots ||= path !== raw && path.includes('.');
  }
  if (doubled) path = path.replace(/\/{2,}/g, '/');
  if (!dots && !params) return path;
  if (hasAmbiguousSegment(path)) return undefined;
  // A service that decodes %2F before it splits (PHP, WSGI and Rack put the decoded path in
  // PATH_INFO) reads `..%2f` as a `..` segment: the path must hold none under that reading either.
  if (escapes && ESCAPED_SLASH.test(path) && hasAmbiguousSegment(path.replace(ESCAPED_SLASHES, '/'))) return undefined;
  return path;
}

const ESCAPED_SLASH = /%2f/i;
const ESCAPED_SLASHES = /%2f/gi;

function hasAmbiguousSegment(path: string): boolean {
  let start = 1;
  while (start <= path.length) {
    let end = path.indexOf('/', start);
    if (end < 0) end = path.length;
    if (isAmbiguousSegment(path, start, end)) return true;
    start = end + 1;
  }
  return false;
}

/**
 * The path as a service that decodes `%2F` into `/` reads it, or undefined when it holds none:
 * rules that name segments judge both readings (an escaped slash must not step around the rule
 * written for `/secret/{id}` with `/secret%2F1`). Slashes are merged in that reading as in the
 * canonical one: a service behind nginx (which decodes, then merges) reads `/s/%2Fadmin` as
 * `/s/admin`, and so must the routes and rules, or the empty segment between the two slashes
 * would match nothing and the path would step around the rule written for `/s/admin`.
 */
export function slashesDecoded(path: string): string | undefined {
  return path.includes('%') && ESCAPED_SLASH.test(path) ? path.replace(ESCAPED_SLASHES, '/').replace(/\/{2,}/g, '/') : undefined;
}
