/** The board of ACME answers in flight, as the doors read it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AcmeChallenges, http01Token } from '../../src/core/tls/acme-challenges.ts';

test('http01Token takes the token of the challenge path only', () => {
  assert.equal(http01Token('/.well-known/acme-challenge/abc-DEF_123'), 'abc-DEF_123');
  assert.equal(http01Token('/.well-known/acme-challenge/'), undefined);
  assert.equal(http01Token('/.well-known/acme-challenge/a/b'), undefined);
  assert.equal(http01Token('/.well-known/acme-challenge/a%2Fb'), undefined);
  assert.equal(http01Token('/.well-known/acme-challenge/abc?x=1'), undefined);
  assert.equal(http01Token('/other/abc'), undefined);
});

test('HTTP-01 answers are served by token until removed', () => {
  const board = new AcmeChallenges();
  board.addHttp01('tok', 'tok.thumb');
  assert.equal(board.http01('tok'), 'tok.thumb');
  assert.equal(board.http01('other'), undefined);
  board.removeHttp01('tok');
  assert.equal(board.http01('tok'), undefined);
  assert.equal(board.size, 0);
});

test('TLS-ALPN-01 answers are found by name whatever its case; removal takes only the answer given', () => {
  const board = new AcmeChallenges();
  const first = { cert: 'c1', key: 'k1' };
  const second = { cert: 'c2', key: 'k2' };
  board.addAlpn01('App.Example.Test', first);
  assert.equal(board.alpn01('app.example.test'), first);
  board.addAlpn01('app.example.test', second);
  board.removeAlpn01('app.example.test', first);
  assert.equal(board.alpn01('APP.example.test'), second, 'a later issuance keeps its answer');
  board.removeAlpn01('app.example.test', second);
  assert.equal(board.alpn01('app.example.test'), undefined);
  assert.equal(board.size, 0);
});
