/**
 * What a scheduled call's run records of its answer never holds a vault value its headers took
 * (spec 1.1 rule 7), however the service repeats it: as sent, JSON-escaped (`"` and `\` escaped,
 * `/` as `\/` by PHP, or escaped twice inside a quoted message), percent-encoded (`%2F`, or `+` for a space in a form), HTML-escaped, in
 * another case, with its white space collapsed as the run's sentence collapses it, or cut at the
 * end of the sentence. Each form found becomes the reference that named it (`${name}`).
 *
 * What this cannot see: a value the service transformed otherwise (hashed, base64, split across
 * lines of its own making). The service chose to repeat a secret; the run shows what it said.
 */

/** Shortest start of a value hidden when the sentence was cut right after it. */
const SHORTEST_CUT = 4;

function htmlEscaped(v: string): string {
  return v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** The forms a service may give back a value in (distinct, non-empty, longest first). */
export function echoForms(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const percent = encodeURIComponent(value);
  const forms = new Set([
    value,
    value.replace(/\s+/g, ' ').trim(),
    json,
    json.replace(/\//g, '\\/'),
    // JSON inside a JSON string: an error message quoting the request it refused.
    JSON.stringify(json).slice(1, -1),
    percent,
    percent.replace(/%20/g, '+'),
    htmlEscaped(value),
    htmlEscaped(value).replace(/&quot;/g, '&#34;'),
  ]);
  forms.delete('');
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Capital letters in lower case where that keeps their length, so positions in the folded text are the text's. */
function fold(text: string): string {
  return text.replace(/\p{Lu}/gu, (c) => {
    const lower = c.toLowerCase();
    return lower.length === c.length ? lower : c;
  });
}

/**
 * `text` with each occurrence of `form` (letters matched without case) written as `ref`; `folded`
 * is `fold(text)`, made once by the caller and again only after a replacement.
 */
function replaceForm(text: string, folded: string, form: string, ref: string): string {
  const wanted = fold(form);
  let at = folded.indexOf(wanted);
  if (at < 0) return text;
  let out = '';
  let from = 0;
  while (at >= 0) {
    out += text.slice(from, at) + ref;
    from = at + wanted.length;
    at = folded.indexOf(wanted, from);
  }
  return out + text.slice(from);
}

/**
 * `text` with every echo of `secrets` (name, value) written as its reference. Longest forms first,
 * so a value inside another stays covered; letters matched without case. Plain searches, never a
 * pattern built from the values: a value may be 64 KiB.
 */
export function withoutEchoes(text: string, secrets: ReadonlyArray<readonly [string, string]>): string {
  // A value named many times (a header may name one sixteen times) is looked for once.
  const named = new Map<string, string>();
  for (const [name, value] of secrets) if (!named.has(value)) named.set(value, name);
  const all: Array<[string, string]> = [];
  for (const [value, name] of named) for (const form of echoForms(value)) all.push([form, `\${${name}}`]);
  if (all.length === 0) return text;
  all.sort((a, b) => b[0].length - a[0].length);
  let out = text;
  let folded = fold(text);
  for (const [form, ref] of all) {
    if (form.length > out.length) continue;
    const replaced = replaceForm(out, folded, form, ref);
    if (replaced !== out) folded = fold((out = replaced));
  }
  // A sentence cut inside a value ends with its start.
  if (out.endsWith('…')) {
    const body = out.slice(0, -1);
    for (const [form, ref] of all) {
      for (let n = Math.min(form.length - 1, body.length); n >= SHORTEST_CUT; n--) {
        if (fold(body.slice(-n)) === fold(form.slice(0, n))) {
          out = `${body.slice(0, -n)}${ref}…`;
          return out;
        }
      }
    }
  }
  return out;
}
