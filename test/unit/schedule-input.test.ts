import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSchedule } from '../../src/core/schedules/schedule-input.ts';
import { GatewayError } from '../../src/http/errors.ts';
import { HOP_BY_HOP, IDENTITY_HEADERS, FORWARDING_HEADERS, REQUEST_DROP } from '../../src/http/gateway-headers.ts';
import { forwardRequestHeaders } from '../../src/pipeline/forward-headers.ts';

const BASE = { routeId: 'billing', path: '/billing/close', every: 'PT1H' };

function refusal(body: unknown): GatewayError {
  try {
    parseSchedule(body);
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    return err;
  }
  assert.fail(`accepted: ${JSON.stringify(body)}`);
}

/** Title-Case, as a service would write it: `x-forwarded-for` → `X-Forwarded-For`. */
const titled = (lower: string) => lower.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());

/** An object whose own keys are exactly `entries`, `__proto__` included (never a prototype). */
function own(entries: Array<[string, unknown]>): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

test('every header the data plane drops from incoming requests is refused in a schedule, each with a reason', () => {
  // What the data plane really drops, asked of the data plane itself.
  const probe = Object.fromEntries([...REQUEST_DROP, 'x-kept'].map((n) => [n, `spoofed ${n}`]));
  const forwarded = forwardRequestHeaders(probe, { remoteAddress: '203.0.113.7', secure: false, ownCookies: new Set(), dropAuthorization: false, via: '1.1 meerkat-0a1b2c3d' });
  const dropped = [...REQUEST_DROP].filter((n) => forwarded[n] !== `spoofed ${n}`);
  assert.equal(forwarded['x-kept'], 'spoofed x-kept');
  for (const set of [HOP_BY_HOP, IDENTITY_HEADERS, FORWARDING_HEADERS]) for (const n of set) assert.ok(dropped.includes(n), `the data plane drops ${n}`);
  for (const lower of dropped) {
    for (const name of [lower, titled(lower)]) {
      const err = refusal({ ...BASE, headers: { [name]: 'spoofed' } });
      assert.equal(err.code, 'schedule.header-forbidden', name);
      assert.equal(err.field, `headers.${name}`);
      assert.match(err.detail, /refused: .+\.$/, name);
      assert.ok(err.detail.toLowerCase().includes(lower.split('-')[0]!) || /Authorization|Host|Gateway-Job/.test(err.detail), `${name}: ${err.detail}`);
    }
  }
});

test('identity, proxy-chain and framing headers are refused with their own reasons', () => {
  const cases: Array<[string, RegExp]> = [
    ['X-Gateway-User', /X-Gateway-User is refused: the gateway writes the identity the route forwards/],
    ['X-Gateway-Roles', /ask for roles instead/],
    ['X-Gateway-Organisation', /identity/],
    ['X-Gateway-Identity', /identity/],
    ['Remote-User', /Remote-User is refused/],
    ['X-Forwarded-For', /client address and the proxy chain/],
    ['X-Forwarded-Anything', /X-Forwarded-Anything is refused: the gateway states the client address/],
    ['Forwarded', /proxy chain/],
    ['X-Real-IP', /proxy chain/],
    ['Connection', /describes one connection/],
    ['Proxy-Authorization', /describes one connection/],
    ['Transfer-Encoding', /describes one connection/],
    ['Content-Length', /frames each call's body itself/],
    ['Expect', /frames each call's body itself/],
    ['Authorization', /scheduler's identity/],
    ['HOST', /the route decides/],
    ['Gateway-Job-Run', /Gateway-Job-Run is refused: .*the run identifier/],
    ['X_Gateway_User', /X_Gateway_User is refused: the gateway writes the identity/],
    ['Gateway_Job_Run', /Gateway-Job-Run is refused: .*the run identifier/],
    ['X-HTTP-Method-Override', /in place of the call's own path or method/],
    ['X-Original-URL', /in place of the call's own path or method/],
    ['True-Client-IP', /client address/],
    ['X-Forwarded', /client address/],
    ['gateway_job', /refused/],
    ['remote_user', /identity/],
    ['X_Forwarded_Host', /proxy chain/],
  ];
  for (const [name, reason] of cases) {
    const err = refusal({ ...BASE, headers: { [name]: 'x' } });
    assert.equal(err.code, 'schedule.header-forbidden', name);
    assert.equal(err.field, `headers.${name}`);
    assert.match(err.detail, reason, name);
  }
  assert.deepEqual({ ...parseSchedule({ ...BASE, headers: { 'X-Api-Key': '${key}', 'X-Forwardedness': 'not the family' } }).headers }, { 'X-Api-Key': '${key}', 'X-Forwardedness': 'not the family' });
});

test('prototype-like names are kept as names: a header or metadata key never sets or reads a prototype', () => {
  const names = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'];
  const parsed = parseSchedule({ ...BASE, headers: own(names.map((n) => [n, `h-${n}`])), metadata: own(names.map((n) => [n, `m-${n}`])) });
  for (const n of names) {
    assert.ok(Object.hasOwn(parsed.headers, n), `header ${n} kept`);
    assert.equal(parsed.headers[n], `h-${n}`);
    assert.ok(Object.hasOwn(parsed.metadata, n), `metadata ${n} kept`);
    assert.equal(parsed.metadata[n], `m-${n}`);
  }
  assert.deepEqual(Object.keys(parsed.headers), names);
  assert.equal(JSON.parse(JSON.stringify(parsed.metadata)).__proto__, 'm-__proto__', 'it survives the trip to the store as a key');
  // An absent name reads as absent, not as what objects inherit.
  const plain = parseSchedule(BASE);
  assert.equal(plain.headers.constructor, undefined);
  assert.equal(plain.metadata.toString, undefined);
});

test('a value of the wrong JSON type in any field is refused with a sentence, never read as text', () => {
  const wrong: unknown[] = [{}, { toString: 'x' }, { valueOf: 'x', toString: 'y' }, [], ['x'], [{}], 1, 1.5, true, false, { a: { b: [null] } }];
  const fields = ['name', 'roles', 'role', 'method', 'routeId', 'path', 'every', 'cron', 'at', 'timezone', 'headers', 'contentType', 'metadata', 'overlap', 'catchUp', 'timeout', 'organisation'];
  for (const field of fields) {
    for (const value of wrong) {
      const body: Record<string, unknown> = { ...BASE, [field]: value };
      if (field === 'cron' || field === 'at') delete body.every;
      if (field === 'roles' && Array.isArray(value) && value.length === 0) continue;
      if (field === 'role') delete body.roles;
      let err: GatewayError | undefined;
      try {
        parseSchedule(body);
      } catch (e) {
        assert.ok(e instanceof GatewayError, `${field}=${JSON.stringify(value)} threw ${String(e)}`);
        err = e;
      }
      if (!err) {
        // Valid shapes among them: headers {toString: "x"} is one header, roles ["x"] one role, catchUp 1 a second.
        const valid = field === 'headers' || field === 'metadata' || (field === 'roles' && JSON.stringify(value) === '["x"]') || (field === 'catchUp' && value === 1);
        assert.ok(valid, `${field}=${JSON.stringify(value)} accepted`);
        continue;
      }
      assert.equal(err.status, 400, `${field}=${JSON.stringify(value)}`);
      assert.ok(err.field?.startsWith(field) || (field === 'role' && err.field === 'role'), `${field}: field ${err.field}`);
      assert.doesNotMatch(err.detail, /function|\[native code\]|\[object Object\]/, `${field}=${JSON.stringify(value)}: ${err.detail}`);
    }
  }
  const numbers = ['headers', 'metadata'].flatMap((f) => wrong.map((v) => refusal({ ...BASE, [f]: { k: v } })));
  for (const err of numbers) assert.doesNotMatch(err.detail, /function|\[native code\]|\[object Object\]/);
});

test('a path with a dot segment is refused; repeated slashes are merged; the query stays as written', () => {
  for (const p of ['/billing/../admin/secret', '/billing/./x', '/billing/..', '/billing/%2e%2e/admin', '/billing/%2E./x', '/billing/.%2e', '/billing//..//admin']) {
    const err = refusal({ ...BASE, path: p });
    assert.equal(err.code, 'schedule.path-invalid', p);
    assert.equal(err.field, 'path');
    assert.match(err.detail, /holds a "\." or "\.\." segment/);
  }
  assert.equal(parseSchedule({ ...BASE, path: '//billing///close//' }).path, '/billing/close/');
  assert.equal(parseSchedule({ ...BASE, path: '/billing//close?next=/a/../b//c' }).path, '/billing/close?next=/a/../b//c');
  assert.equal(parseSchedule({ ...BASE, path: '/billing/v1.2/..x' }).path, '/billing/v1.2/..x');
});

test('a path or a header value the call could not write is refused when the schedule is written', () => {
  // The call writes the request with the rules of http/grammar.ts: what they refuse would fail every run.
  for (const path of ['/billing/\u0001close', '/billing/雪', '/billing/close?q=\u0002', '/billing/\u007f', '/billing/\u0085x', '/billing/é', '/billing/x?a\u007fb']) {
    const err = refusal({ ...BASE, path });
    assert.equal(err.code, 'schedule.path-invalid', JSON.stringify(path));
    assert.equal(err.field, 'path');
  }
  for (const value of ['a\u0001b', 'del\u007f', 'snow 雪', 'nul\u0000']) {
    const err = refusal({ ...BASE, headers: { 'X-Tenant': value } });
    assert.equal(err.code, 'schedule.header-invalid', JSON.stringify(value));
    assert.equal(err.field, 'headers.X-Tenant');
  }
  // Tabs and Latin-1 text are field values; percent-encoding carries the rest of a path.
  const kept = parseSchedule({ ...BASE, path: '/billing/%E9%9B%AA?x=%C3%A9', headers: { 'X-Tenant': 'café\tnord' } });
  assert.equal(kept.path, '/billing/%E9%9B%AA?x=%C3%A9');
  assert.equal(kept.headers['X-Tenant'], 'café\tnord');
});
