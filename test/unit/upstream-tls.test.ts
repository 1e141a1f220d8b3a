import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type SecureContext } from 'node:tls';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trustContext } from '../../src/pipeline/upstream-tls.ts';
import { upstreamFailure } from '../../src/pipeline/upstream.ts';
import { makeCa, type Pem } from '../helpers/private-ca.ts';

const ours = makeCa('Added Authority');
const image = makeCa('Image Authority');
const dir = mkdtempSync(join(tmpdir(), 'meerkat-extra-'));
after(() => {
  ours.remove();
  image.remove();
  rmSync(dir, { recursive: true, force: true });
});

async function handshake(leaf: Pem, context: SecureContext): Promise<string> {
  const server: Server = createServer({ cert: leaf.cert, key: leaf.key }, (_q, r) => r.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string>((resolve) => {
      const port = (server.address() as AddressInfo).port;
      const socket = connect({ host: '127.0.0.1', servername: 'localhost', port, secureContext: context }, () => {
        socket.end();
        resolve('ok');
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
  } finally {
    server.close();
  }
}

test('the trust set: the public authorities, those added, and those Node was told of by NODE_EXTRA_CA_CERTS', async () => {
  const leaf = ours.leaf(['localhost']);
  const imageLeaf = image.leaf(['localhost']);
  assert.equal(await handshake(leaf, trustContext([])), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  assert.equal(await handshake(leaf, trustContext([ours.cert])), 'ok');

  const saved = process.env.NODE_EXTRA_CA_CERTS;
  try {
    const file = join(dir, 'extra.pem');
    writeFileSync(file, image.cert);
    process.env.NODE_EXTRA_CA_CERTS = file;
    // An explicit store replaces Node's default one: the variable's authority must still count.
    assert.equal(await handshake(imageLeaf, trustContext([ours.cert])), 'ok');
    assert.equal(await handshake(leaf, trustContext([ours.cert])), 'ok');
    process.env.NODE_EXTRA_CA_CERTS = join(dir, 'missing.pem');
    assert.equal(await handshake(imageLeaf, trustContext([ours.cert])), 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  } finally {
    if (saved === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = saved;
  }
});

test('a failed verification says which question failed', () => {
  const call = { origin: 'https://billing.internal:8443', timeoutMs: 30_000 };
  const failure = (code: string) => upstreamFailure(Object.assign(new Error(code), { code }), call);
  for (const code of ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY']) {
    const err = failure(code);
    assert.equal(err.code, 'upstream.untrusted', code);
    assert.equal(err.status, 502);
    assert.equal(err.detail, 'The certificate of https://billing.internal:8443 is not signed by a trusted authority (add its authority under trusted authorities).');
  }
  assert.equal(failure('CERT_HAS_EXPIRED').code, 'upstream.untrusted');
  assert.match(failure('CERT_HAS_EXPIRED').detail, /has expired/);
  assert.match(failure('CERT_NOT_YET_VALID').detail, /not valid yet/);
  const name = failure('ERR_TLS_CERT_ALTNAME_INVALID');
  assert.equal(name.code, 'upstream.name-mismatch');
  assert.equal(name.status, 502);
  assert.match(name.detail, /^The certificate of https:\/\/billing\.internal:8443 does not carry the name billing\.internal[:.]/);
  const v6 = upstreamFailure(Object.assign(new Error('x'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }), { origin: 'https://[::1]:8443', timeoutMs: 1000 });
  assert.match(v6.detail, /does not carry the name ::1[:.]/);
  assert.equal(failure('ECONNREFUSED').code, 'upstream.unreachable');
  assert.equal(failure('SOMETHING_ELSE').code, 'upstream.failed');
});
