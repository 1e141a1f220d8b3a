/**
 * A search for secrets in what a gateway let out: each secret is known by a label, and a text
 * holds it when it holds the whole value or any run of `window` characters of its random part.
 * The runs catch a secret cut short as well as a whole one: a parser's error that quotes ten
 * characters of the body, a value clipped to a length, the first characters of a token in a log.
 * Findings name the place and the secret's label, never its value.
 */
import { randomBytes } from 'node:crypto';

export interface Secret {
  readonly label: string;
  readonly value: string;
  /** The random part: runs of it are looked for. */
  readonly core: string;
  /** How many characters of the core make a fragment. */
  readonly window: number;
}

/** Eight base64url characters are 48 random bits: no text holds them by chance. */
export const BASE64_WINDOW = 8;
/** Sixteen hex digits are 64 bits (eight would be 32, too few among ids and hashes). */
export const HEX_WINDOW = 16;

export class SecretBook {
  readonly #byLabel = new Map<string, Secret>();

  /**
   * A new random secret: a letter then base64url, so a parser that quotes the text from the point
   * where it stopped quotes the secret's own characters.
   */
  fresh(label: string, bytes = 15): string {
    const value = `s${randomBytes(bytes).toString('base64url')}`;
    return this.add(label, value);
  }

  /** A secret whose random part is `core` (the whole value by default). */
  add(label: string, value: string, opts: { core?: string; window?: number } = {}): string {
    const core = opts.core ?? value;
    const window = opts.window ?? BASE64_WINDOW;
    if (this.#byLabel.has(label)) throw new Error(`two secrets are labelled "${label}"`);
    if (!value.includes(core)) throw new Error(`the core of "${label}" is not part of its value`);
    if (core.length < window) throw new Error(`"${label}" is shorter than a fragment (${core.length} < ${window})`);
    this.#byLabel.set(label, { label, value, core, window });
    return value;
  }

  get(label: string): Secret {
    const s = this.#byLabel.get(label);
    if (!s) throw new Error(`no secret labelled "${label}"`);
    return s;
  }

  list(): Secret[] {
    return [...this.#byLabel.values()];
  }
}

export interface Source {
  /** Where the text was found: which answer, log line, audit event, CSV row, OTLP record. */
  readonly where: string;
  readonly text: string;
  /**
   * The one place a secret must be, by contract (the token in its mint answer, the cookie in the
   * Set-Cookie that issues it): for that secret's label, the text to search instead, with that
   * one carrier cut out. Every other secret is searched in `text`.
   */
  readonly carrier?: ReadonlyMap<string, string>;
}

export interface Finding {
  readonly where: string;
  readonly label: string;
  readonly whole: boolean;
  /** Characters of the secret found in a row (at least its window). */
  readonly length: number;
  /** The text around the first hit, the secret's characters replaced by its label. */
  readonly context: string;
}

interface Hit {
  readonly label: string;
  readonly at: number;
  readonly length: number;
}

/** Each window of each secret's core, by window length. */
function indexOf(secrets: readonly Secret[]): Map<number, Map<string, string[]>> {
  const byLength = new Map<number, Map<string, string[]>>();
  for (const s of secrets) {
    let windows = byLength.get(s.window);
    if (!windows) byLength.set(s.window, (windows = new Map()));
    for (let i = 0; i + s.window <= s.core.length; i++) {
      const w = s.core.slice(i, i + s.window);
      const labels = windows.get(w);
      if (!labels) windows.set(w, [s.label]);
      else if (!labels.includes(s.label)) labels.push(s.label);
    }
  }
  return byLength;
}

/** The first run of each secret found in `text`, grown while the next windows hit too. */
function hitsIn(text: string, index: Map<number, Map<string, string[]>>, only?: string): Hit[] {
  const first = new Map<string, Hit>();
  for (const [length, windows] of index) {
    for (let i = 0; i + length <= text.length; i++) {
      const labels = windows.get(text.slice(i, i + length));
      if (!labels) continue;
      for (const label of labels) {
        if ((only !== undefined && label !== only) || first.has(label)) continue;
        let end = i + length;
        while (end < text.length && windows.get(text.slice(end - length + 1, end + 1))?.includes(label)) end++;
        first.set(label, { label, at: i, length: end - i });
      }
    }
  }
  return [...first.values()];
}

function finding(where: string, text: string, hit: Hit, secret: Secret): Finding {
  const before = text.slice(Math.max(0, hit.at - 60), hit.at);
  const after = text.slice(hit.at + hit.length, hit.at + hit.length + 60);
  return {
    where, label: hit.label, whole: text.includes(secret.value), length: hit.length,
    context: `${before}[${hit.label}]${after}`.replace(/\s+/g, ' '),
  };
}

/** Every secret of `book` found in `sources`, once per source and secret. */
export function scanForSecrets(book: SecretBook, sources: readonly Source[]): Finding[] {
  const secrets = book.list();
  const index = indexOf(secrets);
  const byLabel = new Map(secrets.map((s) => [s.label, s]));
  const found: Finding[] = [];
  for (const source of sources) {
    for (const hit of hitsIn(source.text, index)) {
      if (source.carrier?.has(hit.label)) continue;
      found.push(finding(source.where, source.text, hit, byLabel.get(hit.label)!));
    }
    for (const [label, text] of source.carrier ?? []) {
      for (const hit of hitsIn(text, index, label)) found.push(finding(`${source.where} (outside the place that carries it)`, text, hit, byLabel.get(label)!));
    }
  }
  return found;
}

/** One line per finding, for an assertion message. */
export function describeFindings(found: readonly Finding[]): string {
  return found
    .map((f) => `- ${f.label} in ${f.where}: ${f.whole ? 'the whole value' : `${f.length} characters of it`}; …${f.context}…`)
    .join('\n');
}
