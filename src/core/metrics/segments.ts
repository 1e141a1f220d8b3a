/**
 * Which path segments look like identifiers (spec 1.5 rules 3-4): a deduced template folds them
 * into `{id}` on sight, so a number, a key, an e-mail or an address never becomes a label. The
 * test is on the segment as forwarded (percent-encoded), and errs towards folding: a wrong fold
 * costs a coarser label, a wrong literal may publish who called.
 */
import { isIP } from 'node:net';

/** The placeholder of a folded segment. */
export const ID = '{id}';

/** Past this length a segment is an identifier whatever it holds (tokens, slugs with ids). */
const LONG = 40;

const WORD = /^[a-z_-]+$/i;
const INTEGER = /^[+-]?\d+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Eight hex digits or more with a digit among them: `deadbeef` stays a word, `5f3a9c1e` folds. */
const HEX = /^(?:0x)?(?=[a-f]*\d)[0-9a-f]{8,}$/i;
/** Crockford base32, 26 characters, a 48-bit time first. */
const ULID = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/i;
/** Sixteen characters of base64url or more, letters and digits both: API keys, short ids, hashes. */
const TOKEN = /^(?=[\w-]*[a-z])(?=[\w-]*\d)[\w-]{16,}$/i;
/** Digits and separators only: dates, times, dotted numbers, an IPv4 address with its port. */
const NUMERIC = /^(?=.*\d)[\d.:,_+-]+$/;
/**
 * An IPv4 address anywhere in a segment, its octets decimal or hex, separated by dots, dashes or
 * underscores: `10.0.0.1.json`, `ip-10-0-0-1`, `127.0.0.1.nip.io`, `0x7f.0.0.1`.
 */
const IPV4_INSIDE = /(?:^|[^0-9a-z])(?:(?:0x[0-9a-f]{1,2}|\d{1,3})[._-]){3}(?:0x[0-9a-f]{1,2}|\d{1,3})(?![0-9a-z])/i;
/** Five digits in a row anywhere: a phone number, an account, a postcode, a date run together. */
const DIGIT_RUN = /\d{5}/;
/** A URI of a scheme that names a person or a place (`tel:+33…`, `mailto:…`), or a link. */
const URI = /^(?:tel|mailto|sms|sip|sips|callto|fax|skype|xmpp|geo|urn|https?|ftp|file|data):/i;
/** Base64 of a JSON object: a JWT, or a token carrying one. */
const JSON_BASE64 = /^eyJ/;

/**
 * A word that names a collection the way REST paths do (`users`, `orders`, `accounts`): a plural,
 * read as a word ending in `s` but not in `ss`, `us` or `is` (`access`, `status`, `analysis`).
 * What follows it is one of the collection's members, a name a caller chose (`/users/alice`), so
 * a deduced template folds that position on sight instead of after its fourth value.
 */
export function isCollectionWord(segment: string): boolean {
  return segment.length >= 3 && WORD.test(segment) && /[^su]s$/i.test(segment) && !/is$/i.test(segment);
}

/** True when `segment` (percent-encoded, as forwarded) stands for a value rather than a name. */
export function isIdentifier(segment: string): boolean {
  if (segment.length > LONG) return true;
  // The common case first: letters and dashes alone match no rule below.
  if (WORD.test(segment)) return false;
  // A percent-encoded byte hides anything, an '@' is an e-mail or a user@host, braces would
  // read as a template variable; two colons or more is IPv6 or a URN.
  if (/[%@{}]/.test(segment) || segment.indexOf(':') !== segment.lastIndexOf(':')) return true;
  if (INTEGER.test(segment) || NUMERIC.test(segment)) return true;
  if (isKey(segment) || IPV4_INSIDE.test(segment) || DIGIT_RUN.test(segment) || URI.test(segment) || JSON_BASE64.test(segment)) return true;
  // A key among dotted parts (a JWT's, `<token>.json`).
  if (segment.includes('.') && segment.split('.').some(isKey)) return true;
  const bare = segment.startsWith('[') && segment.endsWith(']') ? segment.slice(1, -1) : segment;
  return isIP(bare) !== 0;
}

function isKey(s: string): boolean {
  return UUID.test(s) || HEX.test(s) || ULID.test(s) || TOKEN.test(s);
}

/**
 * A segment without its parameters (`users;v=2` is `users`, `alice;jsessionid=…` is `alice`):
 * matrix parameters are values a caller sends, left out of a label as the query string is.
 */
export function withoutParameters(segment: string): string {
  const semi = segment.indexOf(';');
  return semi === -1 ? segment : segment.slice(0, semi);
}
