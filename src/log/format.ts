/**
 * What a log record becomes on its way out (spec 1.4, 2.7): a line in the startup format (text
 * or JSON), an object for a log agent with OpenTelemetry's field names, or the parts of an OTLP
 * log record. Pure. The access line for standard output is made on the main thread when the
 * exchange ends (actors/logs/client.ts says why), so `accessLine` is written for speed.
 */
import type { LogFormat, LogLevel } from '../settings/settings.ts';
import type { AccessEntry } from './access.ts';
import type { LogRecord } from './record.ts';

/** OpenTelemetry's severity numbers (log data model): the first of each range. */
export const SEVERITY_NUMBER: Readonly<Record<LogLevel, number>> = { debug: 5, info: 9, warn: 13, error: 17 };

/** The resource every agent object and pushed record carries (spec 9 rule 2). */
export interface LogResource {
  readonly 'service.name': string;
  readonly 'service.version': string;
  readonly 'service.instance.id': string;
}

export function logResource(version: string, node: string): LogResource {
  return { 'service.name': 'meerkat', 'service.version': version, 'service.instance.id': node };
}

const TRACE_ID = /^[0-9a-f]{32}$/;

/**
 * JSON that never throws: a record's attributes are whatever a caller logged, and a BigInt or a
 * circular object must cost its own value, not the line (nor the batch it travels in).
 */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'object' && v !== null) {
        if (seen.has(v)) return '[circular]';
        seen.add(v);
      }
      return v;
    });
  }
}

/**
 * Characters a terminal or a line reader acts on: C0 and C1 controls, DEL, the separators some
 * readers split lines at (NEL, U+2028, U+2029), and the marks that reorder how a line displays
 * (bidirectional controls). JSON.stringify escapes the C0 ones; the rest are escaped here, in
 * every format, so a typed name cannot move a cursor, recolour a line, start a new one or turn
 * one around where the log is read. Escaped, they are still the same JSON string.
 */
const ACTIVE = /[\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const ACTIVE_OR_SPACE = /[\s"=\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const escaped = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

function textValue(value: unknown): string {
  const s = typeof value === 'string' ? value : typeof value === 'bigint' ? value.toString() : safeJson(value);
  if (s === undefined || !ACTIVE_OR_SPACE.test(s)) return String(s);
  return JSON.stringify(s).replace(ACTIVE, escaped);
}

/** A value as one JSON line (an agent object, an operational record in JSON), its active characters escaped. */
export function jsonLine(value: unknown): string {
  return safeJson(value).replace(ACTIVE, escaped);
}

function pairs(attrs: Readonly<Record<string, unknown>>): string {
  let out = '';
  for (const k of Object.keys(attrs)) {
    const v = attrs[k];
    if (v !== undefined && v !== null) out += ` ${k}=${textValue(v)}`;
  }
  return out;
}

/** An operational record as one line in the startup format. */
export function appLine(record: LogRecord, format: LogFormat): string {
  if (format === 'json') {
    // The record's own members first and last: an attribute of the same name cannot replace them.
    const o: Record<string, unknown> = { time: record.time, type: 'app', level: record.level, msg: record.msg, ...record.attrs };
    o.time = record.time;
    o.type = 'app';
    o.level = record.level;
    o.msg = record.msg;
    return jsonLine(o);
  }
  // A message is one line: a newline in it (an error's text) must not forge a second record.
  return `${record.time} ${record.level.toUpperCase().padEnd(5)} ${oneLine(record.msg)}${pairs(record.attrs)}`;
}

function oneLine(s: string): string {
  if (!/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(s)) return s;
  return s.replace(/\r?\n|\r/g, ' ').replace(/[\u0000-\u0008\u000b-\u001f]/g, escaped).replace(ACTIVE, escaped);
}

/** The access line's fields (spec 2.7), absent ones left out. */
export function accessFields(e: AccessEntry): Record<string, string | number> {
  const out: Record<string, string | number> = { time: isoOf(e.at), type: 'access' };
  if (e.traceId !== null) out.trace_id = e.traceId;
  out.method = e.method;
  out.path = e.path;
  if (e.endpoint !== null) out.endpoint = e.endpoint;
  if (e.route !== null) out.route = e.route;
  out.status = e.status;
  out.ms = e.ms;
  out.outcome = e.outcome;
  if (e.user !== null) out.user = e.user;
  if (e.token !== null) out.token = e.token;
  if (e.ip !== null) out.ip = e.ip;
  out.plane = e.plane;
  if (e.schedule !== null) out.schedule = e.schedule;
  return out;
}

/**
 * JSON's string for `s`: printable ASCII but `"` and `\` goes between quotes as it is. Checked
 * with a loop, not a regular expression: six fields of every access line pass here, and a
 * regular expression's call costs more than reading a short string (bench/RESULTS.md).
 */
function quoted(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s).replace(ACTIVE, escaped);
  }
  return `"${s}"`;
}

let isoAt = Number.NaN;
let isoText = '';
/** An instant in ISO 8601; the lines of one millisecond share one conversion. */
function isoOf(at: number): string {
  if (at !== isoAt) {
    isoText = new Date(at).toISOString();
    isoAt = at;
  }
  return isoText;
}

/**
 * A line's pieces that repeat from one line to the next, each kept with the values it was made
 * of and made again only when one of them changed: the line's start for its millisecond, the
 * method's, the route's, and everything from the outcome on (the same caller on the same route
 * writes the same end of line). A line is then about nine concatenations instead of about
 * twenty-four, each a node of the batch's rope to make and later to flatten (bench/RESULTS.md,
 * "Where the access log's cost lies, and pieces made once"). Values are compared, never trusted:
 * a piece is reused only for the very values it was made of.
 */
let startAt = Number.NaN;
let startText = '';
let methodOf: string | null = null;
let methodText = '';
let routeEndpoint: string | null = null;
let routeId: string | null = null;
let routeText = ',"status":';
let tailOutcome: string | null = null;
let tailUser: string | null = null;
let tailToken: string | null = null;
let tailIp: string | null = null;
let tailPlane: string | null = null;
let tailSchedule: string | null = null;
let tailText = '';

/** `{"time":"…","type":"access"` for the entry's millisecond. */
function lineStart(at: number): string {
  if (at !== startAt) {
    startText = `{"time":"${isoOf(at)}","type":"access"`;
    startAt = at;
  }
  return startText;
}

/** `,"method":"GET","path":` */
function methodPiece(method: string): string {
  if (method !== methodOf) {
    methodText = `,"method":${quoted(method)},"path":`;
    methodOf = method;
  }
  return methodText;
}

/** `,"endpoint":…,"route":…,"status":`, the absent ones left out. */
function routePiece(endpoint: string | null, route: string | null): string {
  if (endpoint !== routeEndpoint || route !== routeId) {
    let s = '';
    if (endpoint !== null) s += `,"endpoint":${quoted(endpoint)}`;
    if (route !== null) s += `,"route":${quoted(route)}`;
    routeText = `${s},"status":`;
    routeEndpoint = endpoint;
    routeId = route;
  }
  return routeText;
}

/** `,"outcome":…` to the closing brace. */
function tailPiece(e: AccessEntry): string {
  if (e.outcome !== tailOutcome || e.user !== tailUser || e.token !== tailToken || e.ip !== tailIp || e.plane !== tailPlane || e.schedule !== tailSchedule) {
    let s = `,"outcome":${quoted(e.outcome)}`;
    if (e.user !== null) s += `,"user":${quoted(e.user)}`;
    if (e.token !== null) s += `,"token":${quoted(e.token)}`;
    if (e.ip !== null) s += `,"ip":${quoted(e.ip)}`;
    s += `,"plane":${quoted(e.plane)}`;
    if (e.schedule !== null) s += `,"schedule":${quoted(e.schedule)}`;
    tailText = `${s}}`;
    tailOutcome = e.outcome;
    tailUser = e.user;
    tailToken = e.token;
    tailIp = e.ip;
    tailPlane = e.plane;
    tailSchedule = e.schedule;
  }
  return tailText;
}

/**
 * `JSON.stringify(accessFields(e))`, character for character, without the object in between,
 * appended to `s`: a batch is built as one string, with no string per line to join after.
 */
function appendAccessJson(s: string, e: AccessEntry): string {
  s += lineStart(e.at);
  if (e.traceId !== null) s += `,"trace_id":${quoted(e.traceId)}`;
  // Whole numbers both (a status; milliseconds rounded): written as JSON writes them.
  return s + methodPiece(e.method) + quoted(e.path) + routePiece(e.endpoint, e.route) + e.status + ',"ms":' + e.ms + tailPiece(e);
}

/** An access record as one line in the startup format: JSON is the object of 2.7. */
export function accessLine(e: AccessEntry, format: LogFormat): string {
  if (format === 'json') return appendAccessJson('', e);
  const { time, type: _type, method, path, status, ms, ...rest } = accessFields(e);
  return `${time} ACCESS ${textValue(method)} ${textValue(path)} ${status} ${ms}ms${pairs(rest)}`;
}

/**
 * Access records as lines joined by newlines (no newline after the last), in the startup format.
 * Formatting a batch in one loop, once its records are gathered, costs the data plane less than
 * a line made at each exchange's end and joined later (bench/observe, side by side): the code of
 * one loop stays warm, and the batch is one string from the start.
 */
export function accessLines(entries: readonly AccessEntry[], format: LogFormat): string {
  let s = '';
  for (let i = 0; i < entries.length; i++) {
    if (i > 0) s += '\n';
    s = format === 'json' ? appendAccessJson(s, entries[i]!) : s + accessLine(entries[i]!, format);
  }
  return s;
}

/** One object per line for a log agent: OpenTelemetry's field names (spec 2.7, last row). */
export interface AgentObject {
  readonly timestamp: string;
  readonly severity_text: string;
  readonly severity_number: number;
  readonly body: string;
  readonly trace_id?: string;
  readonly attributes: Record<string, unknown>;
  readonly resource: LogResource;
}

export function appAgent(record: LogRecord, resource: LogResource): AgentObject {
  const trace = traceOf(record.attrs.traceId);
  return {
    timestamp: record.time,
    severity_text: record.level.toUpperCase(),
    severity_number: SEVERITY_NUMBER[record.level],
    body: record.msg,
    ...(trace ? { trace_id: trace } : {}),
    attributes: { ...record.attrs, type: 'app' },
    resource,
  };
}

export function accessAgent(e: AccessEntry, resource: LogResource): AgentObject {
  const { time, trace_id: _trace, ...attributes } = accessFields(e);
  return {
    timestamp: time as string,
    severity_text: 'INFO',
    severity_number: SEVERITY_NUMBER.info,
    body: accessBody(e),
    ...(e.traceId !== null ? { trace_id: e.traceId } : {}),
    attributes,
    resource,
  };
}

/** The body of an access record for an agent or the collector: what a person scans for. */
export function accessBody(e: AccessEntry): string {
  return `${e.method} ${e.path} ${e.status}`;
}

export function traceOf(value: unknown): string | null {
  return typeof value === 'string' && TRACE_ID.test(value) && !/^0+$/.test(value) ? value : null;
}
