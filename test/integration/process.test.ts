import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import pg from 'pg';
import { dbEnv, createTestDatabase, TEST_DATABASE } from '../helpers/db.ts';
import { loopbackEnv } from '../helpers/gateway.ts';
import { signInAdmin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { runCli, startProcess } from '../helpers/process.ts';
import { openStore } from '../../src/store/orm.ts';

test('meerkat start serves /readyz on all three planes; SIGTERM drains a request in flight and exits 0', async () => {
  const db = await createTestDatabase();
  try {
    const env = loopbackEnv({ ...dbEnv(db) });
    delete (env as Record<string, string | undefined>).GATEWAY_ROOT_PASSWORD;
    const gw = await startProcess(env);
    for (const plane of ['data', 'control', 'internal']) {
      const r = await call(`${gw.urls[plane]}/readyz`);
      assert.equal(r.status, 200, `${plane}: ${r.text}`);
    }
    // The console, as an operator opens it after `npm start`: the page, not console.not-built.
    const page = await call(`${gw.urls.control}/scheduler`);
    assert.equal(page.status, 200, page.text);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.text, /<script type="module" [^>]*src="\/assets\//);
    // First start without GATEWAY_ROOT_PASSWORD: a generated password is printed once, and works.
    const m = /password:\n\n {4}(\S+)\n/.exec(gw.stderr());
    assert.ok(m, 'the generated root password is printed to standard error');
    const signin = await call(`${gw.urls.control}/api/session`, { method: 'POST', body: { name: 'root', password: m[1] } });
    assert.equal(signin.status, 200);

    // A request in flight: headers sent, body still coming when SIGTERM arrives.
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    async function* slowBody() {
      yield Buffer.from('{"name":"root",');
      await gate;
      yield Buffer.from(`"password":${JSON.stringify(m![1])}}`);
    }
    // Its length stated: the plain doors answer a chunked body 411 (docs/core.md).
    const length = Buffer.byteLength(`{"name":"root","password":${JSON.stringify(m[1])}}`);
    const inFlight = request(`${gw.urls.control}/api/session`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(length) }, body: Readable.from(slowBody()),
    });
    await new Promise((r) => setTimeout(r, 200));
    gw.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // New connections are refused while the old request drains (a fresh agent: the kept-alive
    // connections of earlier calls would be answered, with `connection: close`).
    const fresh = new Agent();
    await assert.rejects(request(`${gw.urls.data}/healthz`, { dispatcher: fresh }));
    await fresh.close();
    release();
    const answered = await inFlight;
    assert.equal(answered.statusCode, 200, 'the request in flight was answered');
    await answered.body.text();
    assert.equal(await gw.exited, 0);
    const lines = gw.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string });
    assert.ok(lines.some((l) => l.msg === 'stopping: no new connections; draining requests in flight'));
    assert.ok(lines.some((l) => l.msg === 'gateway stopped'));
  } finally {
    await db.drop();
  }
});

test('a second SIGTERM during the drain exits at once with code 1 and says so on standard error', async () => {
  const db = await createTestDatabase();
  try {
    const gw = await startProcess(loopbackEnv({ ...dbEnv(db) }));
    // A request whose body never comes keeps the drain waiting.
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    async function* neverDone() {
      yield Buffer.from('{"name":"root",');
      await gate;
    }
    const inFlight = request(`${gw.urls.control}/api/session`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100' }, body: Readable.from(neverDone()),
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 200));
    gw.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 1);
    assert.match(gw.stderr(), /meerkat: second SIGTERM: exiting at once/);
    release();
    await inFlight;
  } finally {
    await db.drop();
  }
});

test('bad settings stop the process with a sentence naming the variable', async () => {
  const cases: Array<[string, string]> = [['GATEWAY_ADDR', 'nonsense'], ['GATEWAY_VAULT_KEY', 'xyz'], ['GATEWAY_CLOCK', 'manual']];
  for (const [name, value] of cases) {
    const r = await runCli(['start'], { [name]: value });
    assert.equal(r.code, 78, `${name}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^meerkat: ${name}`));
  }
  // A declarative file whose content is refused, by its shape or by the catalogue, is a setting refused too.
  const db = await createTestDatabase();
  try {
    for (const [file, text] of [['typo.yaml', 'rutes: {}\n'], ['ghost-role.yaml', 'routes:\n  a: { upstream: "http://a", paths: [/a], rule: { roles: [ghost] } }\n']] as const) {
      const path = join(db.dataDir, file);
      writeFileSync(path, text);
      const r = await runCli(['start'], loopbackEnv({ ...dbEnv(db), GATEWAY_CONFIG: path }));
      assert.equal(r.code, 78, `${file}: ${r.stderr}`);
      assert.match(r.stderr, /^meerkat: GATEWAY_CONFIG /m);
    }
  } finally {
    await db.drop();
  }
});

test('an actor that cannot start stops the process with exit code 70 and a sentence naming it', async () => {
  const db = await createTestDatabase();
  try {
    const env = loopbackEnv(dbEnv(db));
    const migrated = await runCli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    // A table dropped by hand: the schema is recorded as up to date, so the boot prepares the
    // store, and the config actor, which keeps the identity signing key there, fails its start-up.
    const store = await openStore({ dataDir: db.dataDir, databaseUrl: db.databaseUrl });
    try {
      await store.em().getConnection().execute('drop table signing_keys');
    } finally {
      await store.close();
    }
    const started = Date.now();
    const r = await runCli(['start'], env, 60_000);
    assert.equal(r.code, 70, r.stderr);
    assert.match(r.stderr, /^meerkat: the actor "config" could not start: its start-up failed: .*signing_keys/m);
    assert.ok(Date.now() - started < 60_000);
    assert.doesNotMatch(r.stderr, /restarting/, 'no retry');
  } finally {
    await db.drop();
  }
});

test('a typo in GATEWAY_LOG_LEVEL starts at info with a warning', async () => {
  const db = await createTestDatabase();
  try {
    const gw = await startProcess(loopbackEnv({ ...dbEnv(db), GATEWAY_LOG_LEVEL: 'verbsoe' }));
    assert.match(gw.stderr(), /GATEWAY_LOG_LEVEL=\\"verbsoe\\" is not a level/);
    assert.doesNotMatch(gw.stderr(), /"level":"debug"/);
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
  } finally {
    await db.drop();
  }
});

test('node flags of the whole process (heap size, gc) do not stop the actors\' workers from starting', async () => {
  const db = await createTestDatabase();
  try {
    // Passed to a worker explicitly, a V8 flag is refused and the worker never starts.
    const gw = await startProcess(loopbackEnv(dbEnv(db)), 120_000, { nodeArgs: ['--max-old-space-size=1024', '--expose-gc'] });
    const ready = await fetch(`${gw.urls.data}/readyz`);
    assert.equal(ready.status, 200);
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
  } finally {
    await db.drop();
  }
});

test('a port already taken: the gateway says which plane and address, and exits 1', async () => {
  const db = await createTestDatabase();
  const db2 = await createTestDatabase();
  try {
    const first = await startProcess(loopbackEnv(dbEnv(db)));
    const taken = new URL(first.urls.internal!).host;
    const second = await runCli(['start'], loopbackEnv({ ...dbEnv(db2), GATEWAY_INTERNAL_ADDR: taken }));
    assert.equal(second.code, 1);
    assert.match(second.stderr, new RegExp(`internal plane cannot listen on ${taken.replace(/\./g, '\\.')}`));
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
  } finally {
    await db.drop();
    await db2.drop();
  }
});

test('meerkat token create prints a token once; the running gateway accepts it', async () => {
  const db = await createTestDatabase();
  try {
    const env = loopbackEnv(dbEnv(db));
    const gw = await startProcess(env);
    const minted = await runCli(['token', 'create', '--name', 'billing', '--kind', 'schedules'], env);
    assert.equal(minted.code, 0, minted.stderr);
    const token = minted.stdout.trim();
    assert.match(token, /^mk_[\w-]{43}$/);
    assert.match(minted.stderr, /schedules token "billing" created/);
    // The gateway folds in changes written by other processes.
    let status = 0;
    for (let i = 0; i < 100 && status !== 404; i++) {
      status = (await call(`${gw.urls.internal}/api/unknown`, { headers: { authorization: `Bearer ${token}` } })).status;
      if (status !== 404) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 404, 'the token opened the internal plane (the path itself does not exist)');
    // The mint is in the trail, with no actor (nobody signed in), and without its secret.
    const root = await signInAdmin(gw.urls.control!);
    const trail = await root.get('/api/audit?kind=token.create');
    assert.equal(trail.status, 200, trail.text);
    assert.deepEqual(trail.json.events.map((e: any) => [e.actor, e.target.name, e.detail]), [[null, 'billing', 'minted with the command line']]);
    assert.ok(!trail.text.includes(token));

    const usage = await runCli(['token', 'create', '--name', 'x', '--kind', 'root'], env);
    assert.equal(usage.code, 64);
    assert.match(usage.stderr, /--kind must be admin or schedules/);
    // Well formed but refused (what it names does not exist): 65, the sentence, no usage text.
    const noAccount = await runCli(['token', 'create', '--name', 'x', '--kind', 'admin', '--account', 'ghost'], env);
    assert.equal(noAccount.code, 65);
    assert.match(noAccount.stderr, /--account: No account has the id or name "ghost"/);
    assert.doesNotMatch(noAccount.stderr, /usage:/);
    const noRoute = await runCli(['token', 'create', '--name', 'x', '--kind', 'schedules', '--routes', 'nowhere'], env);
    assert.equal(noRoute.code, 65);
    assert.match(noRoute.stderr, /--routes: No route has the id "nowhere"/);
    const unknown = await runCli(['frobnicate'], env);
    assert.equal(unknown.code, 64);
    const migrated = await runCli(['migrate'], env);
    assert.equal(migrated.code, 0);
    assert.match(migrated.stderr, /up to date/);
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
  } finally {
    await db.drop();
  }
});


test('a deployment scripted without the console: migrate makes root, a token is minted for it; a place holding no gateway is refused', async () => {
  const db = await createTestDatabase();
  try {
    const env = loopbackEnv({ ...dbEnv(db), GATEWAY_ROOT_PASSWORD: 'scripted-root-password' });
    const migrated = await runCli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    const minted = await runCli(['token', 'create', '--name', 'deploy-bot', '--kind', 'admin'], env);
    assert.equal(minted.code, 0, minted.stderr);
    assert.match(minted.stdout.trim(), /^mk_/);
    // `start --help` is the usage: nothing binds, nothing is created.
    const help = await runCli(['start', '--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage:/);
    assert.equal((await runCli(['start', '--verbose'], env)).code, 64);
  } finally {
    await db.drop();
  }
  // A data directory or a database named wrong: no token is minted into a new, empty one.
  const empty = await createTestDatabase();
  try {
    const refused = await runCli(['token', 'create', '--name', 'ci', '--kind', 'schedules'], loopbackEnv(dbEnv(empty)));
    assert.equal(refused.code, 65, refused.stderr);
    assert.match(refused.stderr, empty.databaseUrl === undefined ? /GATEWAY_DATA_DIR=".*" holds no gateway/ : /GATEWAY_DATABASE_URL names a database that holds no gateway/);
    if (empty.databaseUrl !== undefined) {
      // Refused rather than filled: not one table was made there.
      const client = new pg.Client({ connectionString: empty.databaseUrl });
      await client.connect();
      try {
        const tables = await client.query(`select table_name from information_schema.tables where table_schema = 'public'`);
        assert.deepEqual(tables.rows, []);
      } finally {
        await client.end();
      }
    }
  } finally {
    await empty.drop();
  }
});

test('a PostgreSQL database that does not exist: start and migrate refuse the setting (78), token create finds no gateway there (65)', { skip: TEST_DATABASE !== 'postgres' }, async () => {
  const db = await createTestDatabase();
  try {
    const url = new URL(db.databaseUrl!);
    url.pathname = `${url.pathname}_missing`;
    const env = loopbackEnv({ GATEWAY_DATA_DIR: db.dataDir, GATEWAY_DATABASE_URL: url.toString() });
    for (const [args, code] of [[['start'], 78], [['migrate'], 78], [['token', 'create', '--name', 'ci', '--kind', 'admin'], 65]] as const) {
      const run = await runCli([...args], env);
      assert.equal(run.code, code, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /does not exist: create it first/);
    }
  } finally {
    await db.drop();
  }
});
