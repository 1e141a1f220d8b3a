import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSettings, SettingsError } from '../../src/settings/settings.ts';
import { parseListenAddress } from '../../src/settings/address.ts';

function refusal(env: Record<string, string>): SettingsError {
  try {
    loadSettings(env);
  } catch (err) {
    assert.ok(err instanceof SettingsError, `expected a SettingsError, got ${String(err)}`);
    return err;
  }
  assert.fail(`settings ${JSON.stringify(env)} were accepted`);
}

test('defaults are the spec\'s ports on every interface', () => {
  const s = loadSettings({});
  assert.deepEqual(s.listen.data, { host: '0.0.0.0', port: 8080 });
  assert.deepEqual(s.listen.control, { host: '0.0.0.0', port: 9090 });
  assert.deepEqual(s.listen.internal, { host: '0.0.0.0', port: 7070 });
  assert.deepEqual(s.listenTls.data, { host: '0.0.0.0', port: 8443 });
  assert.deepEqual(s.listenTls.control, { host: '0.0.0.0', port: 9443 });
  assert.deepEqual(s.listenTls.internal, { host: '0.0.0.0', port: 7443 });
  assert.equal(s.logLevel, 'info');
  assert.equal(s.logFormat, 'text');
  assert.equal(s.edition, 'community');
  assert.equal(s.clock, 'system');
  assert.equal(s.databaseUrl, undefined);
  assert.ok(Object.isFrozen(s) && Object.isFrozen(s.listen));
});

test('listen addresses: host:port, :port, [v6]:port and port 0', () => {
  assert.deepEqual(parseListenAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseListenAddress(':9090'), { host: '0.0.0.0', port: 9090 });
  assert.deepEqual(parseListenAddress('[::1]:80'), { host: '::1', port: 80 });
  assert.deepEqual(parseListenAddress('gateway.local:8080'), { host: 'gateway.local', port: 8080 });
  for (const bad of ['nonsense', '8080', ':65536', ':-1', 'a b:80', '::1:80', '[zz]:80', ':http']) {
    assert.equal(typeof parseListenAddress(bad), 'string', bad);
  }
});

test('each bad value stops the boot with a sentence naming the variable', () => {
  const cases: Array<[string, string]> = [
    ['GATEWAY_ADDR', 'nonsense'],
    ['GATEWAY_ADMIN_ADDR', ':99999'],
    ['GATEWAY_INTERNAL_ADDR', 'x y:1'],
    ['GATEWAY_TLS_ADDR', 'nope'],
    ['GATEWAY_ADMIN_TLS_ADDR', ':abc'],
    ['GATEWAY_INTERNAL_TLS_ADDR', '1.2.3.4'],
    ['GATEWAY_LOG_FORMAT', 'xml'],
    ['GATEWAY_EDITION', 'enterprise'],
    ['GATEWAY_CLOCK', 'fast'],
    ['GATEWAY_VAULT_KEY', 'c2hvcnQ='],
    ['GATEWAY_DATABASE_URL', 'mysql://localhost/db'],
    ['GATEWAY_DATABASE_URL', 'not a url'],
    ['GATEWAY_DATABASE_URL', 'postgres://localhost'],
    ['GATEWAY_ROOT_PASSWORD', 'short'],
    ['GATEWAY_CONFIG', '/nonexistent/meerkat.yaml'],
    ['GATEWAY_CONFIG', 'package.txt'],
    // A file where a directory belongs, itself or on the way to it.
    ['GATEWAY_DATA_DIR', 'package.json'],
    ['GATEWAY_DATA_DIR', 'package.json/data'],
    ['GATEWAY_OTLP_ENDPOINT', 'ftp://collector'],
    ['GATEWAY_NODE_NAME', 'has spaces'],
    ['GATEWAY_DRAIN_TIMEOUT', 'soon'],
    ['GATEWAY_SCHEDULER_SHARDS', '17'],
    ['GATEWAY_SCHEDULER_MAX_CALLS', '0'],
    ['GATEWAY_SCHEDULER_MAX_CALLS', 'many'],
    ['GATEWAY_SMTP_URL', 'mail.example.com:25'],
    ['GATEWAY_SMTP_URL', 'https://mail.example.com'],
    ['GATEWAY_SMTP_URL', 'smtp://mail.example.com/inbox'],
    ['GATEWAY_SMTP_URL', 'smtp://user@mail.example.com'],
    ['GATEWAY_SMTP_FROM', 'meerkat'],
    ['GATEWAY_SMTP_FROM', 'Meerkat <meerkat>'],
    ['GATEWAY_DIGEST_TO', 'ops@example.com,security'],
    ['GATEWAY_DIGEST_TO', 'ops@example.com; sec@example.com'],
    ['GATEWAY_DIGEST_HORIZON', '0'],
    ['GATEWAY_DIGEST_HORIZON', '366'],
    ['GATEWAY_DIGEST_HORIZON', 'a month'],
  ];
  for (const [name, value] of cases) {
    const err = refusal({ [name]: value });
    assert.equal(err.variable, name);
    assert.match(err.message, new RegExp(name), `${name}=${value}: ${err.message}`);
    assert.ok(err.message.endsWith('.'), `a sentence: ${err.message}`);
  }
});

test('a GATEWAY_LOG_LEVEL typo falls back to info with a warning (spec 1.4 rule 2)', () => {
  const s = loadSettings({ GATEWAY_LOG_LEVEL: 'verbose' });

test('the old access log switch is not read: it is said once at start (spec 9 rule 3)', () => {
  const s = loadSettings({ GATEWAY_ACCESS_LOG: 'true' });
  assert.equal(s.warnings.length, 1);
  assert.match(s.warnings[0]!, /GATEWAY_ACCESS_LOG is no longer read/);
  assert.equal((s as unknown as Record<string, unknown>).accessLog, undefined);
});
  assert.equal(s.logLevel, 'info');
  assert.equal(s.warnings.length, 1);
  assert.match(s.warnings[0]!, /GATEWAY_LOG_LEVEL="verbose"/);
  assert.equal(loadSettings({ GATEWAY_LOG_LEVEL: 'WARN' }).logLevel, 'warn');
});

test('the manual clock is refused unless every listener is on loopback', () => {
  const err = refusal({ GATEWAY_CLOCK: 'manual' });
  assert.equal(err.variable, 'GATEWAY_CLOCK');
  assert.match(err.message, /loopback/);
  const loop = {
    GATEWAY_ADDR: '127.0.0.1:0', GATEWAY_ADMIN_ADDR: '127.0.0.1:0', GATEWAY_INTERNAL_ADDR: '[::1]:0',
    GATEWAY_TLS_ADDR: 'localhost:0', GATEWAY_ADMIN_TLS_ADDR: '127.0.0.2:0', GATEWAY_INTERNAL_TLS_ADDR: '127.0.0.1:0',
  };
  assert.equal(loadSettings({ ...loop, GATEWAY_CLOCK: 'manual' }).clock, 'manual');
  assert.throws(() => loadSettings({ ...loop, GATEWAY_TLS_ADDR: ':8443', GATEWAY_CLOCK: 'manual' }), /data/);
});

test('the test clock starts at GATEWAY_CLOCK_START: an instant with its offset or epoch milliseconds, never without the manual clock', () => {
  const loop = {
    GATEWAY_ADDR: '127.0.0.1:0', GATEWAY_ADMIN_ADDR: '127.0.0.1:0', GATEWAY_INTERNAL_ADDR: '127.0.0.1:0',
    GATEWAY_TLS_ADDR: '127.0.0.1:0', GATEWAY_ADMIN_TLS_ADDR: '127.0.0.1:0', GATEWAY_INTERNAL_TLS_ADDR: '127.0.0.1:0', GATEWAY_CLOCK: 'manual',
  };
  assert.equal(loadSettings(loop).clockStart, undefined);
  assert.equal(loadSettings({ ...loop, GATEWAY_CLOCK_START: '2026-03-29T00:59:00Z' }).clockStart, Date.UTC(2026, 2, 29, 0, 59));
  assert.equal(loadSettings({ ...loop, GATEWAY_CLOCK_START: '2026-03-29T02:59:30.5+02:00' }).clockStart, Date.UTC(2026, 2, 29, 0, 59, 30, 500));
  assert.equal(loadSettings({ ...loop, GATEWAY_CLOCK_START: ' 1790000000000 ' }).clockStart, 1_790_000_000_000);
  // A local time names a different instant on each host; a date alone, a word or a negative number names none.
  // A date that does not exist is refused, never rolled over into the next month.
  for (const raw of ['2026-03-29T00:59:00', '2026-03-29', 'tomorrow', '-5', '2026-13-45T99:00:00Z', '2026-02-30T00:00:00Z']) {
    const err = refusal({ ...loop, GATEWAY_CLOCK_START: raw });
    assert.equal(err.variable, 'GATEWAY_CLOCK_START', raw);
    assert.match(err.message, /RFC 3339 time with its offset/, raw);
  }
  assert.match(refusal({ ...loop, GATEWAY_CLOCK_START: '2026-02-30T00:00:00Z' }).message, /day 30 does not exist in 2026-02/);
  assert.match(refusal({ ...loop, GATEWAY_CLOCK_START: '2026-03-29T00:59:00' }).message, /no offset/);
  const without = refusal({ GATEWAY_CLOCK_START: '2026-03-29T00:59:00Z' });
  assert.equal(without.variable, 'GATEWAY_CLOCK_START');
  assert.match(without.message, /GATEWAY_CLOCK=manual/);
});

test('a valid vault key and database URL are kept', () => {
  const key = Buffer.alloc(32, 7).toString('base64');
  const s = loadSettings({ GATEWAY_VAULT_KEY: key, GATEWAY_DATABASE_URL: 'postgres://u:p@db:5432/meerkat' });
  assert.equal(s.vaultKey?.length, 32);
  assert.equal(s.databaseUrl, 'postgres://u:p@db:5432/meerkat');
});

test('the expiry digest: no mail server, nobody, a 30-day horizon, and the host\'s name as sender', () => {
  const s = loadSettings({});
  assert.equal(s.smtpUrl, undefined);
  assert.deepEqual(s.digestTo, []);
  assert.equal(s.digestHorizonDays, 30);
  assert.match(s.smtpFrom, /^meerkat@\S+$/);
  assert.deepEqual(s.warnings, []);
});

test('the expiry digest settings are kept as written, the recipients once each', () => {
  const s = loadSettings({
    GATEWAY_SMTP_URL: ' smtps://digest%40example.com:p%25ss@mail.example.com:465 ',
    GATEWAY_SMTP_FROM: 'Meerkat <meerkat@example.com>',
    GATEWAY_DIGEST_TO: 'ops@example.com, security@example.com,,OPS@example.com',
    GATEWAY_DIGEST_HORIZON: '14',
  });
  assert.equal(s.smtpUrl, 'smtps://digest%40example.com:p%25ss@mail.example.com:465');
  assert.equal(s.smtpFrom, 'Meerkat <meerkat@example.com>');
  assert.deepEqual(s.digestTo, ['ops@example.com', 'security@example.com']);
  assert.ok(Object.isFrozen(s.digestTo));
  assert.equal(s.digestHorizonDays, 14);
  assert.deepEqual(s.warnings, []);
  assert.equal(loadSettings({ GATEWAY_SMTP_URL: 'smtp://[::1]' }).smtpUrl, 'smtp://[::1]');
});

test('a refused GATEWAY_SMTP_URL never quotes the password', () => {
  for (const url of ['http://user:s3cret-pw@mail.example.com', 'smtp://user:s3cret-pw@mail.example.com/x', 'smtp://user:s3cret%zz@mail.example.com']) {
    const err = refusal({ GATEWAY_SMTP_URL: url });
    assert.equal(err.variable, 'GATEWAY_SMTP_URL');
    assert.doesNotMatch(err.message, /s3cret/, err.message);
  }
});

test('a mail server without recipients, or recipients without a mail server, is a warning', () => {
  assert.match(loadSettings({ GATEWAY_SMTP_URL: 'smtp://mail.example.com' }).warnings.join(' '), /GATEWAY_DIGEST_TO names nobody/);
  assert.match(loadSettings({ GATEWAY_DIGEST_TO: 'ops@example.com' }).warnings.join(' '), /GATEWAY_SMTP_URL is not/);
});

test('two doors on one port are refused at boot, naming both; distinct hosts or random ports are not', () => {
  const same = refusal({ GATEWAY_ADDR: ':8080', GATEWAY_TLS_ADDR: ':8080' });
  assert.equal(same.variable, 'GATEWAY_TLS_ADDR');
  assert.match(same.message, /GATEWAY_TLS_ADDR \(0\.0\.0\.0:8080\) takes the port of GATEWAY_ADDR \(0\.0\.0\.0:8080\)/);
  assert.equal(refusal({ GATEWAY_ADMIN_ADDR: '127.0.0.1:9443' }).variable, 'GATEWAY_ADMIN_TLS_ADDR', 'a loopback door meets the wildcard default on its port');
  assert.doesNotThrow(() => loadSettings({ GATEWAY_ADDR: '127.0.0.1:7000', GATEWAY_TLS_ADDR: '127.0.0.2:7000' }));
  // localhost is a loopback address written another way.
  assert.equal(refusal({ GATEWAY_ADDR: '127.0.0.1:7000', GATEWAY_TLS_ADDR: 'localhost:7000' }).variable, 'GATEWAY_TLS_ADDR');
  assert.equal(refusal({ GATEWAY_ADDR: 'LOCALHOST:7000', GATEWAY_TLS_ADDR: '[::1]:7000' }).variable, 'GATEWAY_TLS_ADDR');
  assert.doesNotThrow(() => loadSettings({ GATEWAY_ADDR: '127.0.0.1:0', GATEWAY_TLS_ADDR: '127.0.0.1:0', GATEWAY_ADMIN_ADDR: '127.0.0.1:0' }));
});
