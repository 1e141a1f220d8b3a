import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cursorCodec, nextLink, readPageQuery } from '../../src/http/cursor.ts';
import { fillPage, type Page } from '../../src/core/paging.ts';
import { GatewayError } from '../../src/http/errors.ts';

const isCode = (code: string, field: string) => (err: unknown) => err instanceof GatewayError && err.code === code && err.field === field;
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

test('a cursor carries its key through and back, and says nothing readable at a glance', () => {
  const schedules = cursorCodec('schedules', ['integer', 'string']);
  const raw = schedules.encode([1_795_402_080_123, 'sch_083e0304c2b7c3c73f320fa5']);
  assert.match(raw, /^[A-Za-z0-9_-]+$/);
  assert.deepEqual(schedules.decode(raw), [1_795_402_080_123, 'sch_083e0304c2b7c3c73f320fa5']);
  const runs = cursorCodec('runs', ['string']);
  assert.deepEqual(runs.decode(runs.encode(['run-19a0c2d3e4f0001abcdef012'])), ['run-19a0c2d3e4f0001abcdef012']);
});

test('a cursor the list did not give is refused as cursor.invalid, field cursor', () => {
  const schedules = cursorCodec('schedules', ['integer', 'string']);
  const runs = cursorCodec('runs', ['string']);
  for (const raw of [
    '', 'not a cursor', '%%%', 'x'.repeat(600), b64('{'), b64('"schedules"'), b64('{"k":1}'),
    runs.encode(['run-1']), // another list's cursor
    b64('["schedules",1]'), b64('["schedules",1,"a","b"]'), b64('["schedules","1","a"]'), b64('["schedules",1.5,"a"]'),
    b64('["schedules",1,""]'), b64(`["schedules",1,"${'a'.repeat(201)}"]`), b64('["schedules",1e300,"a"]'),
    b64('[ "schedules", 1, "a" ]'), // the same key, spelled another way
    `${schedules.encode([1, 'a'])}==`,
  ]) {
    assert.throws(() => schedules.decode(raw), isCode('cursor.invalid', 'cursor'), JSON.stringify(raw));
  }
});

test('limit and cursor are read once each, limit within its bounds', () => {
  const codec = cursorCodec('runs', ['string']);
  const limits = { max: 500, fallback: 50 };
  const read = (q: string) => readPageQuery(new URLSearchParams(q), codec, limits);
  assert.deepEqual(read(''), { limit: 50, after: null });
  assert.deepEqual(read(`limit=2&cursor=${codec.encode(['run-a'])}`), { limit: 2, after: ['run-a'] });
  assert.deepEqual(read('limit=500'), { limit: 500, after: null });
  for (const q of ['limit=0', 'limit=501', 'limit=-1', 'limit=2.0', 'limit=', 'limit=1e2', 'limit=99999999999']) {
    assert.throws(() => read(q), isCode('field.invalid', 'limit'), q);
  }
  assert.throws(() => read('limit=1&limit=2'), isCode('field.invalid', 'limit'));
  assert.throws(() => read(`cursor=${codec.encode(['a'])}&cursor=${codec.encode(['b'])}`), isCode('field.invalid', 'cursor'));
  assert.throws(() => read('cursor='), isCode('cursor.invalid', 'cursor'));
});

test('the next link keeps every parameter, replaces the cursor, and is a relative reference', () => {
  const link = nextLink('/api/schedules', new URLSearchParams('meta.env=~^prod-&limit=2&cursor=old'), 'new_-');
  assert.equal(link, '</api/schedules?meta.env=%7E%5Eprod-&limit=2&cursor=new_->; rel="next"');
  const target = new URL(link.slice(1, link.indexOf('>')), 'https://gw.example:7443/api/schedules?limit=2');
  assert.equal(target.origin, 'https://gw.example:7443');
  assert.equal(target.searchParams.get('meta.env'), '~^prod-');
  assert.equal(target.searchParams.get('limit'), '2');
});

/** Rows in the list's order, read as a database would: strictly after a key, at most `count`. */
function table(n: number) {
  const rows = Array.from({ length: n }, (_, i) => ({ at: Math.floor(i / 3), id: `r${String(i).padStart(3, '0')}`, kept: i % 4 !== 1 && i % 5 !== 2 }));
  const reads: number[] = [];
  const read = async (after: { at: number; id: string } | null, count: number) => {
    reads.push(count);
    return rows.filter((r) => after === null || r.at > after.at || (r.at === after.at && r.id > after.id)).slice(0, count);
  };
  return { rows, reads, read, key: (r: { at: number; id: string }) => ({ at: r.at, id: r.id }) };
}

test('pages of every size hold every kept row once, in order, and the last page names no next', async () => {
  const t = table(37);
  for (const keep of [undefined, (r: { kept: boolean }) => r.kept]) {
    const want = t.rows.filter((r) => keep === undefined || keep(r)).map((r) => r.id);
    for (let limit = 1; limit <= want.length + 1; limit++) {
      const got: string[] = [];
      let after: { at: number; id: string } | null = null;
      let pages = 0;
      do {
        const page: Page<(typeof t.rows)[number], { at: number; id: string }> = await fillPage({ limit, after, read: t.read, key: t.key, ...(keep ? { keep, batch: 4 } : {}) });
        assert.ok(page.items.length <= limit);
        if (page.next !== null) {
          assert.equal(page.items.length, limit, 'only a full page says more remain');
          assert.deepEqual(page.next, t.key(page.items[page.items.length - 1]!));
        }
        got.push(...page.items.map((r) => r.id));
        after = page.next;
        pages++;
      } while (after !== null);
      assert.deepEqual(got, want, `limit ${limit}${keep ? ', filtered' : ''}`);
      assert.equal(pages, Math.max(1, Math.ceil(want.length / limit)), `limit ${limit}: no empty last page`);
    }
  }
});

test('without a filter one read of limit + 1 rows makes a page', async () => {
  const t = table(10);
  const page = await fillPage({ limit: 4, after: null, read: t.read, key: t.key });
  assert.deepEqual(t.reads, [5]);
  assert.deepEqual(page.items.map((r) => r.id), ['r000', 'r001', 'r002', 'r003']);
  assert.deepEqual(page.next, { at: 1, id: 'r003' });
});
