import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { formatAddress, hostsOverlap, isLoopback, parseListenAddress, type ListenAddress } from './address.ts';
import { parseSmtpUrl } from './smtp-url.ts';
import { parseMoment } from '../clock/moment.ts';

export type PlaneName = 'data' | 'control' | 'internal';
export const PLANES: readonly PlaneName[] = ['data', 'control', 'internal'];
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';
export type Edition = 'community' | 'licensed';

export interface Settings {
  /** Plain listeners per plane. */
  readonly listen: Readonly<Record<PlaneName, ListenAddress>>;
  /** HTTPS listeners per plane; they open only when a certificate is placed. */
  readonly listenTls: Readonly<Record<PlaneName, ListenAddress>>;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  readonly dataDir: string;
  /** `postgres://…` when the cluster mode is on; undefined for the embedded SQLite file. */
  readonly databaseUrl: string | undefined;
  readonly rootPassword: string | undefined;
  /** 32-byte master key, when given by GATEWAY_VAULT_KEY. Otherwise `vault.key` in dataDir. */
  readonly vaultKey: Buffer | undefined;
  readonly edition: Edition;
  readonly clock: 'system' | 'manual';
  /** Where the test clock starts (GATEWAY_CLOCK_START, epoch ms); undefined: at the wall clock. */
  readonly clockStart: number | undefined;
  readonly configFile: string | undefined;
  readonly otlpEndpoint: string | undefined;
  readonly nodeName: string;
  /** The traffic metrics are recorded (GATEWAY_METRICS, on by default). */
  readonly metrics: boolean;
  readonly drainTimeoutMs: number;
  /** ScheduleActors on this node, each owning a share of the schedules (always 1 on SQLite). */
  readonly schedulerShards: number;
  /** Calls each ScheduleActor keeps in flight at most; due turns past that wait in the database. */
  readonly schedulerMaxCalls: number;
  /** Names the services call the internal plane by (GATEWAY_INTERNAL_NAMES); empty when not said. */
  readonly internalNames: readonly string[];
  /**
   * Ports the world reaches, when the runtime publishes them (GATEWAY_PUBLIC_PORTS): `console`,
   * `app`, `internal` for the HTTPS doors, `console-http`, `app-http`, `internal-http` for the
   * plain ones. A door the runtime does not say is reached on the port it listens on.
   */
  readonly publicPorts: Readonly<Partial<Record<PublicDoor, number>>>;
  /** Mail server of the expiry digest (`smtp://` or `smtps://`, credentials included); unset, the digest is a log line. */
  readonly smtpUrl?: string;
  /** Sender of the gateway's mail. */
  readonly smtpFrom: string;
  /** Administrators who receive the expiry digest (accounts carry no mail address). */
  readonly digestTo: readonly string[];
  /** Certificates expiring within this many days are in the digest. */
  readonly digestHorizonDays: number;
  /** Warnings found while reading (a level typo falls back to info): logged once the logger exists. */
  readonly warnings: readonly string[];
}

export const PUBLIC_DOORS = ['console', 'app', 'internal', 'console-http', 'app-http', 'internal-http'] as const;
export type PublicDoor = (typeof PUBLIC_DOORS)[number];

/** A setting that stops the boot; the message names the variable. */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
  constructor(readonly variable: string, message: string) {
    super(message);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULTS = {
  GATEWAY_ADDR: ':8080',
  GATEWAY_TLS_ADDR: ':8443',
  GATEWAY_ADMIN_ADDR: ':9090',
  GATEWAY_ADMIN_TLS_ADDR: ':9443',
  GATEWAY_INTERNAL_ADDR: ':7070',
  GATEWAY_INTERNAL_TLS_ADDR: ':7443',
} as const;

/** Every variable the gateway reads, with its meaning: the source of the README's settings table. */
export const SETTINGS_DOC: ReadonlyArray<readonly [string, string, string]> = [
  ['GATEWAY_ADDR', DEFAULTS.GATEWAY_ADDR, 'data plane, plain HTTP (host:port or :port; port 0 picks a free port)'],
  ['GATEWAY_TLS_ADDR', DEFAULTS.GATEWAY_TLS_ADDR, 'data plane, HTTPS door (opens when a certificate is placed)'],
  ['GATEWAY_ADMIN_ADDR', DEFAULTS.GATEWAY_ADMIN_ADDR, 'control plane (console and admin API), plain HTTP'],
  ['GATEWAY_ADMIN_TLS_ADDR', DEFAULTS.GATEWAY_ADMIN_TLS_ADDR, 'control plane, HTTPS door'],
  ['GATEWAY_INTERNAL_ADDR', DEFAULTS.GATEWAY_INTERNAL_ADDR, 'internal plane (scheduling API, tokens only), plain HTTP'],
  ['GATEWAY_INTERNAL_TLS_ADDR', DEFAULTS.GATEWAY_INTERNAL_TLS_ADDR, 'internal plane, HTTPS door'],
  ['GATEWAY_DATA_DIR', './data', 'directory of the embedded SQLite database and vault.key'],
  ['GATEWAY_DATABASE_URL', '(unset)', 'postgres://… selects PostgreSQL (cluster mode) instead of SQLite'],
  ['GATEWAY_ROOT_PASSWORD', '(generated)', 'password of the root account created at first start (at least 12 characters); without it a password is generated and printed once to standard error'],
  ['GATEWAY_VAULT_KEY', '(vault.key file)', 'vault master key, base64 of 32 bytes; otherwise the file vault.key (mode 0600) in the data directory, created at first start'],
  ['GATEWAY_LOG_LEVEL', 'info', 'operational log level: debug, info, warn, error (a typo falls back to info)'],
  ['GATEWAY_LOG_FORMAT', 'text', 'operational log format: text or json'],
  ['GATEWAY_EDITION', 'community', 'community or licensed'],
  ['GATEWAY_CLOCK', 'system', 'manual turns on the test clock (/__clock on the control plane); refused unless every listener is on loopback'],
  ['GATEWAY_CLOCK_START', '(the wall clock)', 'with GATEWAY_CLOCK=manual, the instant the test clock starts at: an RFC 3339 time with its offset (2026-03-29T00:59:00Z) or epoch milliseconds'],
  ['GATEWAY_CONFIG', '(unset)', 'declarative JSON or YAML file of routes and roles applied at start'],
  ['GATEWAY_OTLP_ENDPOINT', '(unset)', 'OpenTelemetry collector (http or https URL) for the push modes'],
  ['GATEWAY_NODE_NAME', '(host name-pid)', 'this node\'s name in run records, logs and the cluster\'s tables; one name per node: on PostgreSQL a node whose name another running node holds is refused at start (exit 78)'],
  ['GATEWAY_INTERNAL_NAMES', '(unset)', 'comma list of the names services call the internal plane by; a certificate placed on the internal plane must carry one'],
  ['GATEWAY_PUBLIC_PORTS', '(unset)', 'ports the world reaches when the runtime publishes others, e.g. console=443,app=443,app-http=80 (keys console, app, internal for HTTPS, with -http for plain); links, the redirect and HSTS use them'],
  ['GATEWAY_DRAIN_TIMEOUT', '30', 'seconds a stopping gateway waits for requests in flight before closing them'],
  ['GATEWAY_METRICS', 'on', 'traffic metrics of the data plane: on or off (off: nothing is recorded, the screen stays empty)'],
  ['GATEWAY_SCHEDULER_SHARDS', '2', 'ScheduleActors (worker threads) firing schedules on this node, 1 to 16; on SQLite always 1 (writes serialise on the file)'],
  ['GATEWAY_SCHEDULER_MAX_CALLS', '10000', 'scheduled calls each ScheduleActor keeps in flight at most, 1 to 100000; due turns past that wait in the database, where another node may take them'],
  ['GATEWAY_SMTP_URL', '(unset)', 'mail server of the daily certificate expiry digest: smtp://[user:password@]host[:port] (plain, upgraded by STARTTLS when offered; port 587 by default) or smtps://… (TLS from the first byte; port 465); user and password percent-encoded; unset, the digest is one operational log line'],
  ['GATEWAY_SMTP_FROM', '(meerkat@host name)', 'sender of the gateway\'s mail: an address (meerkat@example.com), or a name and an address in angle brackets'],
  ['GATEWAY_DIGEST_TO', '(unset)', 'comma list of the addresses that receive the expiry digest: the administrators, named by the deployment since accounts carry no mail address'],
  ['GATEWAY_DIGEST_HORIZON', '30', 'days ahead the expiry digest looks, 1 to 365: certificates expiring within it are named, then the expired ones'],
];

function address(env: Env, name: keyof typeof DEFAULTS): ListenAddress {
  const raw = env[name] ?? DEFAULTS[name];
  const parsed = parseListenAddress(raw);
  if (typeof parsed === 'string') {
    throw new SettingsError(name, `${name}="${raw}" is not a listen address: ${parsed}.`);
  }
  return Object.freeze(parsed);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase();
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new SettingsError(name, `${name}="${raw}" is not allowed; use one of: ${allowed.join(', ')}.`);
}

function vaultKey(env: Env): Buffer | undefined {
  const raw = env.GATEWAY_VAULT_KEY;
  if (raw === undefined || raw === '') return undefined;
  const trimmed = raw.trim();
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
  if (key.length !== 32) {
    throw new SettingsError('GATEWAY_VAULT_KEY', 'GATEWAY_VAULT_KEY must be 32 bytes written in base64 (44 characters, for example the output of `openssl rand -base64 32`).');
  }
  return key;
}

function databaseUrl(env: Env): string | undefined {
  const raw = env.GATEWAY_DATABASE_URL;
  if (raw === undefined || raw.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new SettingsError('GATEWAY_DATABASE_URL', 'GATEWAY_DATABASE_URL is not a URL; write postgres://user:password@host:5432/database.');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new SettingsError('GATEWAY_DATABASE_URL', `GATEWAY_DATABASE_URL uses "${url.protocol}"; only postgres:// is supported (leave it unset for the embedded SQLite database).`);
  }
  if (url.pathname.length <= 1) {
    throw new SettingsError('GATEWAY_DATABASE_URL', 'GATEWAY_DATABASE_URL names no database; write postgres://host:5432/<database>.');
  }
  return raw.trim();
}

function configFile(env: Env): string | undefined {
  const raw = env.GATEWAY_CONFIG;
  if (raw === undefined || raw.trim() === '') return undefined;
  const path = resolve(raw.trim());
  if (!/\.(json|ya?ml)$/i.test(path)) {
    throw new SettingsError('GATEWAY_CONFIG', `GATEWAY_CONFIG="${raw}" must name a .json, .yaml or .yml file.`);
  }
  if (!existsSync(path) || !statSync(path).isFile() || !canAccess(path, constants.R_OK)) {
    throw new SettingsError('GATEWAY_CONFIG', `GATEWAY_CONFIG="${raw}" names no readable file.`);
  }
  return path;
}

function canAccess(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/**
 * The data directory (the SQLite file, vault.key): a directory this process may write in, or one
 * it may create (its nearest existing parent is a writable directory). Said here, naming the
 * variable, rather than as the file system's or the database driver's error at first use.
 */
function dataDirectory(env: Env): string {
  const raw = env.GATEWAY_DATA_DIR?.trim() || './data';
  const path = resolve(raw);
  let probe = path;
  while (!existsSync(probe)) {
    const parent = dirname(probe);
    if (parent === probe) break;
    probe = parent;
  }
  if (!statSync(probe).isDirectory()) {
    throw new SettingsError('GATEWAY_DATA_DIR', probe === path
      ? `GATEWAY_DATA_DIR="${raw}" is a file, not a directory.`
      : `GATEWAY_DATA_DIR="${raw}" cannot be made: ${probe} is a file.`);
  }
  if (!canAccess(probe, constants.W_OK | constants.X_OK)) {
    throw new SettingsError('GATEWAY_DATA_DIR', probe === path
      ? `GATEWAY_DATA_DIR="${raw}" is a directory this process (uid ${process.getuid?.() ?? '?'}) may not write in.`
      : `GATEWAY_DATA_DIR="${raw}" cannot be made: this process (uid ${process.getuid?.() ?? '?'}) may not write in ${probe}.`);
  }
  return path;
}

function httpUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    const url = new URL(raw.trim());
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString();
  } catch {
    // fall through to the refusal
  }
  throw new SettingsError(name, `${name}="${raw}" is not an http:// or https:// URL.`);
}

function smtpUrl(env: Env): string | undefined {
  const raw = env.GATEWAY_SMTP_URL;
  if (raw === undefined || raw.trim() === '') return undefined;
  // The value may hold a password: the sentence never quotes it.
  const target = parseSmtpUrl(raw);
  if (typeof target === 'string') throw new SettingsError('GATEWAY_SMTP_URL', `GATEWAY_SMTP_URL ${target}.`);
  return raw.trim();
}

/** A mailbox as RFC 5321 carries it, without comments or quoted local parts. */
const MAILBOX = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

function smtpFrom(env: Env): string {
  const raw = env.GATEWAY_SMTP_FROM?.trim();
  if (!raw) return `meerkat@${hostname()}`;
  const named = /^([^<>@",;]*)<([^<>]+)>$/.exec(raw);
  if (MAILBOX.test(raw) || (named && MAILBOX.test(named[2]!.trim()))) return raw;
  throw new SettingsError('GATEWAY_SMTP_FROM', `GATEWAY_SMTP_FROM="${raw}" is not a mail address; write meerkat@example.com or Meerkat <meerkat@example.com>.`);
}

function digestTo(env: Env): string[] {
  const raw = env.GATEWAY_DIGEST_TO ?? '';
  const out: string[] = [];
  for (const item of raw.split(',').map((a) => a.trim()).filter((a) => a !== '')) {
    if (!MAILBOX.test(item)) {
      throw new SettingsError('GATEWAY_DIGEST_TO', `GATEWAY_DIGEST_TO lists "${item}", which is not a mail address; write a comma list such as ops@example.com,security@example.com.`);
    }
    if (!out.some((a) => a.toLowerCase() === item.toLowerCase())) out.push(item);
  }
  return out;
}

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function internalNames(env: Env): string[] {
  const raw = env.GATEWAY_INTERNAL_NAMES?.trim();
  if (!raw) return [];
  const names = [...new Set(raw.split(',').map((n) => n.trim().toLowerCase()).filter(Boolean))];
  const bad = names.find((n) => !HOST_NAME.test(n));
  if (bad !== undefined) throw new SettingsError('GATEWAY_INTERNAL_NAMES', `GATEWAY_INTERNAL_NAMES: "${bad}" is not a host name (letters, digits, "-" and dots, such as meerkat-internal.default.svc).`);
  return names;
}

function publicPorts(env: Env): Partial<Record<PublicDoor, number>> {
  const raw = env.GATEWAY_PUBLIC_PORTS?.trim();
  const out: Partial<Record<PublicDoor, number>> = {};
  if (!raw) return out;
  for (const entry of raw.split(',').map((e) => e.trim()).filter(Boolean)) {
    const m = /^([a-z-]+)=(\d{1,5})$/.exec(entry);
    if (!m || !(PUBLIC_DOORS as readonly string[]).includes(m[1]!) || Number(m[2]) < 1 || Number(m[2]) > 65535) {
      throw new SettingsError('GATEWAY_PUBLIC_PORTS', `GATEWAY_PUBLIC_PORTS: "${entry}" is not <door>=<port>; doors are ${PUBLIC_DOORS.join(', ')} and ports 1 to 65535 (e.g. console=443,app=443,app-http=80).`);
    }
    out[m[1] as PublicDoor] = Number(m[2]);
  }
  return out;
}

function wholeNumber(env: Env, name: string, fallback: number, min: number, max: number, unit = ''): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new SettingsError(name, `${name}="${raw}" must be a whole number${unit ? ` of ${unit}` : ''} from ${min} to ${max}.`);
  }
  return Number(raw);
}

/**
 * GATEWAY_CLOCK_START: the test clock's first instant, so that a test can begin at a moment that
 * matters (a zone's clock change, a cluster's now) instead of waiting for the wall clock to get
 * there. An instant names its offset: a local time would mean a different instant on each host.
 */
function clockStartOf(env: Env, clock: 'system' | 'manual'): number | undefined {
  const raw = env.GATEWAY_CLOCK_START?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (clock !== 'manual') {
    throw new SettingsError('GATEWAY_CLOCK_START', 'GATEWAY_CLOCK_START applies to the test clock only: set GATEWAY_CLOCK=manual with it, or leave it out.');
  }
  if (/^\d{1,15}$/.test(raw)) return Number(raw);
  const moment = parseMoment(raw);
  if (!moment.ok) {
    throw new SettingsError('GATEWAY_CLOCK_START', `GATEWAY_CLOCK_START="${raw}" is not an instant (${moment.reason}): give an RFC 3339 time with its offset, such as 2026-03-29T00:59:00Z, or epoch milliseconds.`);
  }
  return moment.ms;
}

/** Reads and validates every GATEWAY_* variable once; the result is frozen. */
export function loadSettings(env: Env = process.env): Settings {
  const warnings: string[] = [];
  const listen = {
    data: address(env, 'GATEWAY_ADDR'),
    control: address(env, 'GATEWAY_ADMIN_ADDR'),
    internal: address(env, 'GATEWAY_INTERNAL_ADDR'),
  };
  const listenTls = {
    data: address(env, 'GATEWAY_TLS_ADDR'),
    control: address(env, 'GATEWAY_ADMIN_TLS_ADDR'),
    internal: address(env, 'GATEWAY_INTERNAL_TLS_ADDR'),
  };

  // Two doors on one port would meet only when the second opens (an HTTPS door when its first
  // certificate is placed): said at boot instead.
  const doors: Array<[string, ListenAddress]> = [
    ['GATEWAY_ADDR', listen.data], ['GATEWAY_ADMIN_ADDR', listen.control], ['GATEWAY_INTERNAL_ADDR', listen.internal],
    ['GATEWAY_TLS_ADDR', listenTls.data], ['GATEWAY_ADMIN_TLS_ADDR', listenTls.control], ['GATEWAY_INTERNAL_TLS_ADDR', listenTls.internal],
  ];
  for (let i = 0; i < doors.length; i++) {
    for (let j = i + 1; j < doors.length; j++) {
      const [a, x] = doors[i]!;
      const [b, y] = doors[j]!;
      if (x.port !== 0 && x.port === y.port && hostsOverlap(x, y)) {
        throw new SettingsError(b, `${b} (${formatAddress(y.host, y.port)}) takes the port of ${a} (${formatAddress(x.host, x.port)}): each door needs a port of its own.`);
      }
    }
  }

  // Spec 1.4 rule 2: a typo in the level must not stop a gateway; it falls back to info.
  let logLevel: LogLevel = 'info';
  const rawLevel = env.GATEWAY_LOG_LEVEL?.trim().toLowerCase();
  if (rawLevel) {
    if (['debug', 'info', 'warn', 'error'].includes(rawLevel)) logLevel = rawLevel as LogLevel;
    else warnings.push(`GATEWAY_LOG_LEVEL="${env.GATEWAY_LOG_LEVEL}" is not a level (debug, info, warn, error); using info.`);
  }
  // Spec 9 rule 3: the access log is switched in the console now; the old switch is said, never read.
  if (env.GATEWAY_ACCESS_LOG !== undefined) {
    warnings.push('GATEWAY_ACCESS_LOG is no longer read: the access log is switched on every node at once in the console (Logs, Access log) or with PUT /api/settings/logs {"accessLog": true}.');
  }

  const rootPassword = env.GATEWAY_ROOT_PASSWORD === '' ? undefined : env.GATEWAY_ROOT_PASSWORD;
  if (rootPassword !== undefined && rootPassword.length < 12) {
    throw new SettingsError('GATEWAY_ROOT_PASSWORD', 'GATEWAY_ROOT_PASSWORD must be at least 12 characters long.');
  }

  const clock = oneOf(env, 'GATEWAY_CLOCK', ['system', 'manual'] as const, 'system');
  if (clock === 'manual') {
    const open = [...Object.entries(listen), ...Object.entries(listenTls)].filter(([, a]) => !isLoopback(a));
    if (open.length > 0) {
      throw new SettingsError('GATEWAY_CLOCK', `GATEWAY_CLOCK=manual is allowed only when every listener is on loopback; set the ${open.map(([p]) => p).join(', ')} plane addresses to 127.0.0.1:<port>.`);
    }
  }

  const clockStart = clockStartOf(env, clock);

  const nodeName = env.GATEWAY_NODE_NAME?.trim() || `${hostname()}-${process.pid}`;
  if (!/^[\w.:-]{1,100}$/.test(nodeName)) {
    throw new SettingsError('GATEWAY_NODE_NAME', 'GATEWAY_NODE_NAME may hold letters, digits, ".", ":", "_" and "-" (at most 100).');
  }

  const dbUrl = databaseUrl(env);
  let schedulerShards = wholeNumber(env, 'GATEWAY_SCHEDULER_SHARDS', 2, 1, 16);
  if (dbUrl === undefined && schedulerShards !== 1) {
    if (env.GATEWAY_SCHEDULER_SHARDS?.trim()) warnings.push(`GATEWAY_SCHEDULER_SHARDS=${schedulerShards} applies to PostgreSQL; on the embedded SQLite file one ScheduleActor fires every schedule.`);
    schedulerShards = 1;
  }

  const smtp = smtpUrl(env);
  const recipients = digestTo(env);
  if (smtp !== undefined && recipients.length === 0) {
    warnings.push('GATEWAY_SMTP_URL is set but GATEWAY_DIGEST_TO names nobody; the expiry digest stays an operational log line.');
  } else if (smtp === undefined && recipients.length > 0) {
    warnings.push('GATEWAY_DIGEST_TO is set but GATEWAY_SMTP_URL is not; the expiry digest stays an operational log line.');
  }

  return Object.freeze({
    listen: Object.freeze(listen),
    listenTls: Object.freeze(listenTls),
    logLevel,
    logFormat: oneOf(env, 'GATEWAY_LOG_FORMAT', ['text', 'json'] as const, 'text'),
    dataDir: dataDirectory(env),
    databaseUrl: dbUrl,
    rootPassword,
    vaultKey: vaultKey(env),
    edition: oneOf(env, 'GATEWAY_EDITION', ['community', 'licensed'] as const, 'community'),
    metrics: oneOf(env, 'GATEWAY_METRICS', ['on', 'off'] as const, 'on') === 'on',
    clock,
    clockStart,
    configFile: configFile(env),
    otlpEndpoint: httpUrl(env, 'GATEWAY_OTLP_ENDPOINT'),
    nodeName,
    drainTimeoutMs: wholeNumber(env, 'GATEWAY_DRAIN_TIMEOUT', 30, 0, 3600, 'seconds') * 1000,
    schedulerShards,
    schedulerMaxCalls: wholeNumber(env, 'GATEWAY_SCHEDULER_MAX_CALLS', 10_000, 1, 100_000),
    internalNames: Object.freeze(internalNames(env)),
    publicPorts: Object.freeze(publicPorts(env)),
    smtpUrl: smtp,
    smtpFrom: smtpFrom(env),
    digestTo: Object.freeze(recipients),
    digestHorizonDays: wholeNumber(env, 'GATEWAY_DIGEST_HORIZON', 30, 1, 365, 'days'),
    warnings: Object.freeze(warnings),
  });
}
