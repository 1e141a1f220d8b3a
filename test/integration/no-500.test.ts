import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, signIn } from '../helpers/http.ts';
import { mulberry32 as prng } from '../helpers/random.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(async () => { await t?.close(); });


test('no input of any shape produces a 500', async () => {
  const rnd = prng(20261122);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const cookie = await signIn(t.url('control'), 'root', ROOT_PASSWORD);
  const paths = ['/', '/healthz', '/readyz', '/api/session', '/api/openapi.json', '/api/schedules', '/api/x/%ff', '/%', '/api/session/..', '/__clock', '/__clock/advance', '/a'.repeat(200), '/api//session', '/api/session?x=1&&=', '/.well-known/jwks.json',
    '/api/routes', '/api/routes/r1', '/api/routes/%00', '/api/roles/r1', '/api/roles', '/api/accounts', '/api/accounts/x', '/api/tokens', '/api/tokens/x',
    '/api/organisations/o1', '/api/organisations/o1/vault/v', '/api/vault/v', '/api/vault', '/.meerkat/session', '/public/../admin', '/%2e%2e/x',
    '/api/settings/schedules', '/api/schedules/live', '/api/schedules/live?tenant=', '/api/schedules/x/runs?limit=-1',
    '/api/schedules?meta.constructor=~native', '/api/schedules?__proto__=x', '/api/schedules/constructor', '/api/schedules/x/run', '/api/schedules/live?constructor=1',
    '/api/schedules?cursor=%ff&limit=1e3', '/api/schedules?limit=1&cursor=WyJzY2hlZHVsZXMiLDEsIngiXQ', '/api/schedules/x/runs?cursor=!&before=1',
    '/api/certificates', '/api/certificates/x', '/api/certificates/x/placement', '/api/certificates/x/csr', '/api/certificates/x/answer', '/api/certificates/mounts',
    '/api/settings/tls', '/api/settings/tls/ports/app', '/api/settings/tls/ports/x', '/api/settings/tls/doors/console', '/api/settings/tls/redirect',
    '/api/trusted-authorities', '/api/trusted-authorities/x', '/api/acme/authorities', '/api/acme/authorities/x', '/.well-known/acme-challenge/x'];
  const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'TRACE'];
  const bodies: Array<string | undefined> = [undefined, '', '{', 'null', '[]', '"x"', '{"name":null}', '{"name":"root","password":{}}', '{"by":"P1Y"}', '\u0000\u0001', '{"__proto__":{"x":1}}', 'x'.repeat(5000),
    // Shapes of the core resources, each wrong somewhere (a route's paths are never fuzzed, so nothing is proxied).
    '{"upstream":"http://127.0.0.1:9","paths":["/fuzz-only"],"rule":{"roles":[1]}}', '{"upstream":"http://127.0.0.1:9","paths":["/fuzz-only"],"endpointRules":[{"method":"GET","path":"/{","roles":["x"]}]}',
    '{"upstream":"http://127.0.0.1:9","paths":["/fuzz-only"],"timeout":"P1Y","hosts":[null]}', '{"upstream":{"a":1},"paths":"x"}', '{"implies":[null,"r1"]}', '{"implies":["r1"]}',
    '{"name":"o","hours":{"timezone":5,"windows":[{}]}}', '{"name":"o","hours":{"timezone":"UTC","windows":[{"days":["XYZ"],"from":"9","to":"24:01"}]}}', '{"value":1}', '{"value":"v"}',
    '{"kind":"personal"}', '{"name":"t","kind":"schedules","routes":[""],"roles":"x"}', '{"name":"u","password":"long-enough-password","capabilities":["root","root"]}', '{"disabled":"no"}',
    '{"retention":"P0D"}', '{"retention":"P99999999999999D"}', '{"retention":["P1D"]}', '{"retention":"P2D"}',
    // Inherited names as fields and keys, and values that are not what a field expects.
    '{"routeId":"r1","every":{"toString":"x"}}', '{"routeId":"r1","every":"PT1H","headers":{"constructor":"x","__proto__":"y"},"metadata":{"valueOf":{}}}',
    '{"run":"r","state":"failed","retryIn":{"valueOf":1}}', '{"run":"r","state":"constructor"}', '{"replayOf":{"toString":"x"}}', '{"__proto__":null,"constructor":{"prototype":{}}}',
    '{"upstream":"http://127.0.0.1:9","paths":["/fuzz-only"],"identity":{"toString":"x"}}', '{"name":"o","hours":{"timezone":{},"windows":[{"days":[{}],"from":[],"to":1}]}}',
    // Transport security, each wrong somewhere.
    '{"source":"self-signed","names":[{}]}', '{"source":"import","cert":1,"key":[]}', '{"source":"file","certPath":"/proc/self/environ","keyPath":"x"}',
    '{"source":"csr","names":["a.test"],"subject":{"constructor":1}}', '{"source":"acme","authority":{}}', '{"planes":"app"}', '{"planes":["app"],"replace":"yes"}',
    '{"http":"no"}', '{"proxied":"x","names":[1]}', '{"proxied":true,"proxyAddresses":["::/0"]}', '{"forceHttps":true,"hstsMaxAge":1e99}', '{"name":"a","pem":{}}',
    '{"name":"a","directory":"ftp://x","termsAccepted":"yes","eab":{"kid":1}}'];
  const types = ['application/json', 'text/plain', 'application/problem+json', '', 'multipart/form-data; boundary=x'];
  const auths = [undefined, 'Bearer', 'Bearer mk_x', 'Basic Zm9vOmJhcg==', 'Bearer ' + 'a'.repeat(500)];
  let count = 0;
  for (let i = 0; i < 800; i++) {
    const plane = pick(['data', 'control', 'internal'] as const);
    const method = pick(methods);
    const headers: Record<string, string> = {};
    const type = pick(types);
    if (type) headers['content-type'] = type;
    const auth = pick(auths);
    if (auth) headers.authorization = auth;
    if (rnd() < 0.4) headers.cookie = rnd() < 0.5 ? cookie : 'mk_session=garbage; other=1';
    if (rnd() < 0.3) headers.origin = pick([t.url('control'), 'null', 'https://x.example']);
    const body = method === 'GET' || method === 'HEAD' ? undefined : pick(bodies);
    const a = await call(`${t.url(plane)}${pick(paths)}`, { method, headers, ...(body !== undefined ? { raw: body } : {}) });
    assert.ok(a.status < 500 || (a.status === 503 && a.json?.code === 'not-ready'), `${method} ${plane} -> ${a.status} ${a.text}`);
    if (a.status >= 400 && method !== 'HEAD') {
      assert.equal(typeof a.json?.code, 'string', `${method} ${plane}: problem+json expected, got ${a.text}`);
      // A caller's value read as text shows a function's source or an object's default text.
      assert.doesNotMatch(String(a.json.detail), /function|\[native code\]|\[object Object\]/, `${method} ${plane}: ${a.text}`);
    }
    count++;
  }
  assert.equal(count, 800);
  assert.equal(t.logs.filter((r) => r.msg === 'request failed').length, 0, 'no handler failed');
});

test('raw malformed HTTP is answered or closed, and the gateway keeps serving', async () => {
  const { port } = new URL(t.url('control'));
  const garbage = ['GARBAGE\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', 'GET /' + 'x'.repeat(20000) + ' HTTP/1.1\r\nHost: x\r\n\r\n', 'POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{'];
  for (const g of garbage) {
    const reply = await new Promise<string>((resolve) => {
      const sock = connect(Number(port), '127.0.0.1');
      let data = '';
      sock.on('data', (d) => { data += d.toString(); });
      sock.on('close', () => resolve(data));
      sock.on('error', () => resolve(data));
      sock.write(g);
      setTimeout(() => sock.destroy(), 300);
    });
    assert.doesNotMatch(reply, /^HTTP\/1\.1 5\d\d/, `${g.slice(0, 40)} -> ${reply.slice(0, 80)}`);
  }
  assert.equal((await call(`${t.url('control')}/healthz`)).status, 200);
});
