/**
 * Masking (spec 1.3 rule 6, 2.6): what the trail keeps of a value.
 *
 * - A field whose name contains password, secret, token or hash (any case) becomes `***`, at any
 *   depth, whatever it holds (text, number, object, list). null stays null: "set" and "unset" stay
 *   visible, the value never does.
 * - A string holding a data URI becomes its media type and decoded size (`image/png, 12.3 KB`):
 *   the trail says an image changed without carrying it. Any data URI is summarised, not only
 *   images: a base64 document is no more readable in a trail than a picture.
 * - Walking is bounded: a cycle becomes `[cycle]`, a value deeper than 32 levels `[too deep]`.
 *   Keys are copied as own data properties, so a `__proto__` key from parsed JSON stays a key and
 *   never reaches a prototype.
 */

export const MASK = '***';
const MAX_DEPTH = 32;
const RULE_NAMES = /password|secret|token|hash/i;

/** The rule 6 test on a field's name. */
export function isSecretName(name: string): boolean {
  return RULE_NAMES.test(name);
}

const DATA_URI = /^data:([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?((?:;[^,;]*)*?)(;base64)?,/i;

function sizeText(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** `image/png, 12.3 KB` for a data URI, undefined for any other text. */
export function dataUriSummary(text: string): string | undefined {
  const m = DATA_URI.exec(text);
  if (!m) return undefined;
  const payload = text.slice(m[0].length);
  let bytes: number;
  if (m[3] !== undefined) {
    const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0;
    bytes = Math.max(0, Math.floor(((payload.length - padding) * 3) / 4));
  } else {
    try {
      bytes = Buffer.byteLength(decodeURIComponent(payload));
    } catch {
      bytes = Buffer.byteLength(payload);
    }
  }
  return `${(m[1] ?? 'text/plain').toLowerCase()}, ${sizeText(bytes)}`;
}

type NameTest = (name: string) => boolean;

function walk(value: unknown, secret: NameTest, depth: number, ancestors: Set<object>): unknown {
  if (typeof value === 'string') return dataUriSummary(value) ?? value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (ArrayBuffer.isView(value)) return `binary, ${sizeText(value.byteLength)}`;
  if (ancestors.has(value)) return '[cycle]';
  if (depth >= MAX_DEPTH) return '[too deep]';
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => walk(item, secret, depth + 1, ancestors));
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const masked = secret(key) ? (v === null || v === undefined ? v : MASK) : walk(v, secret, depth + 1, ancestors);
      // `out["__proto__"] = …` would set the prototype: that one key is defined, the rest assigned
      // (every other name on Object.prototype is a data property, so assignment makes an own one).
      if (key === '__proto__') Object.defineProperty(out, key, { value: masked, enumerable: true, writable: true, configurable: true });
      else out[key] = masked;
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}

/** A copy of `value` fit for the trail (the rules above). The input is never changed. */
export function mask(value: unknown): unknown {
  return walk(value, isSecretName, 0, new Set());
}

/** Names compared without case, `-` or `_`: `api_key`, `API-Key` and `apiKey` are one name. */
const normal = (name: string): string => name.toLowerCase().replace(/[-_]/g, '');

/**
 * Endpoint audit's body capture (spec 2.6): besides the rule 6 names, a field is replaced when
 * its name contains one of these…
 */
export const BODY_SECRET_PARTS = [
  'password', 'passwd', 'passphrase', 'passcode', 'secret', 'token', 'hash', 'apikey', 'accesskey',
  'privatekey', 'credential', 'authorization', 'cookie', 'sessionid', 'clientsecret', 'cardnumber',
] as const;
/**
 * …or has one of these short names as one of its words (`pin`, `pinCode`, `otp_code`, `cvv2`):
 * too common inside other words to match as a part (`shipping`, `footprint`).
 */
export const BODY_SECRET_NAMES = ['pwd', 'pin', 'cvv', 'cvc', 'otp', 'totp', 'ssn', 'pan', 'auth'] as const;

/** A field name's words: split at `-`, `_`, other punctuation, a lower-to-upper case change and letter-digit boundaries. */
function wordsOf(name: string): string[] {
  return name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/([A-Za-z])(\d)|(\d)([A-Za-z])/g, '$1$3 $2$4')
    .toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== '');
}

/** The encoded body kept at most (bytes of UTF-8), marker included. */
export const BODY_MAX_BYTES = 64 * 1024;

/** Distinct names a test remembers its answer for; past it, it starts again (a body's keys are the caller's). */
const NAME_MEMORY = 2_048;
/** Distinct `secretFields` lists whose tests are kept (one per audited operation in practice). */
const TEST_MEMORY = 256;
const tests = new Map<string, (name: string) => boolean>();

/**
 * The name test maskBody applies (the defaults above plus `secretFields`, matched whole): endpoint
 * audit's fields taken from a header, a query parameter or a body pointer use it too. One test per
 * list, remembering its answer per name: an audited operation's bodies repeat the same keys, and
 * the words of a name cost four regular expressions (the AuditBatcher's profile put the test at
 * a seventh of its thread).
 */
export function bodySecretTest(secretFields: readonly string[] = []): (name: string) => boolean {
  const key = JSON.stringify(secretFields);
  let test = tests.get(key);
  if (test !== undefined) return test;
  const extra = new Set(secretFields.map(normal));
  const judge = (name: string): boolean => {
    const n = normal(name);
    return isSecretName(name) || extra.has(n)
      || BODY_SECRET_PARTS.some((part) => n.includes(part))
      || wordsOf(name).some((w) => (BODY_SECRET_NAMES as readonly string[]).includes(w));
  };
  const known = new Map<string, boolean>();
  test = (name) => {
    let secret = known.get(name);
    if (secret === undefined) {
      if (known.size >= NAME_MEMORY) known.clear();
      known.set(name, (secret = judge(name)));
    }
    return secret;
  };
  if (tests.size >= TEST_MEMORY) tests.clear();
  tests.set(key, test);
  return test;
}

/**
 * The JSON body of an audited call as the trail keeps it: secret fields replaced at any depth
 * (the defaults above plus the operation's own `secretFields`, matched whole), data URIs
 * summarised, encoded, and cut to 64 KB with a marker saying how much was left out. The cut
 * text is no longer JSON; the marker says so to a reader. No body gives an empty text.
 */
export function maskBody(body: unknown, secretFields: readonly string[] = []): string {
  const encoded = JSON.stringify(walk(body, bodySecretTest(secretFields), 0, new Set()));
  if (encoded === undefined) return '';
  const bytes = Buffer.from(encoded, 'utf8');
  if (bytes.length <= BODY_MAX_BYTES) return encoded;
  const marker = `…[cut: ${bytes.length} bytes in all]`;
  let end = BODY_MAX_BYTES - Buffer.byteLength(marker);
  // Never split a character: step back off UTF-8 continuation bytes.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8') + marker;
}
