import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withoutEchoes } from '../../src/core/vault/echoes.ts';

const SECRET = 'pa"ss\\wo/rd é>&x y';
const secrets = [['KEY', SECRET], ['SHORT', 'wo/rd']] as const;

test('every form a service may echo a vault value in becomes its reference', () => {
  const forms = [
    SECRET,
    JSON.stringify(SECRET).slice(1, -1),
    JSON.stringify(SECRET).slice(1, -1).replace(/\//g, '\\/'),
    encodeURIComponent(SECRET),
    encodeURIComponent(SECRET).replace(/%20/g, '+'),
    encodeURIComponent(SECRET).toLowerCase(),
    SECRET.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
    SECRET.replace(/&/g, '&amp;').replace(/>/g, '&gt;').replace(/"/g, '&#34;'),
    SECRET.toUpperCase(),
  ];
  for (const form of forms) {
    const out = withoutEchoes(`{"headers":{"x-api-key":"${form}"},"n":1}`, secrets);
    assert.equal(out, '{"headers":{"x-api-key":"${KEY}"},"n":1}', form);
  }
});

test('white space collapsed as the run\'s sentence collapses it, and a value cut at the sentence\'s end', () => {
  assert.equal(withoutEchoes('tab\tkey: a  b\tc', [['T', 'a  b\tc']]), 'tab\tkey: ${T}');
  assert.equal(withoutEchoes('key: a b c', [['T', 'a  b\tc']]), 'key: ${T}');
  assert.equal(withoutEchoes('400 Bad Request: invalid key sk_live_SEC…', [['K', 'sk_live_SECRET123']]), '400 Bad Request: invalid key ${K}…');
  assert.equal(withoutEchoes('400 Bad Request: ends with sk…', [['K', 'sk_live_SECRET123']]), '400 Bad Request: ends with sk…', 'three characters are not a value');
});

test('a value inside another stays covered; other text is left as it is', () => {
  assert.equal(withoutEchoes('a=sk_1_old b=sk_1', [['NEW', 'sk_1'], ['OLD', 'sk_1_old']]), 'a=${OLD} b=${NEW}');
  assert.equal(withoutEchoes('nothing secret here (1+1=2) $5 [x]', secrets), 'nothing secret here (1+1=2) $5 [x]');
  assert.equal(withoutEchoes('text', []), 'text');
  assert.equal(withoutEchoes('a$&b', [['D', '$&']]), 'a${D}b', 'replacement patterns in a value are text');
});
