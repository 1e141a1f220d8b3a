import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { connect } from 'node:tls';
import { readClientHello } from '../../src/http/client-hello.ts';

/** The ClientHello Node's own TLS client sends, captured from the wire. */
async function captured(opts: { servername?: string; ALPNProtocols?: string[] }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const server = createServer((sock) => {
      sock.once('data', (chunk: Buffer) => {
        resolve(chunk);
        sock.destroy();
        server.close();
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const c = connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', rejectUnauthorized: false, ...opts });
      c.on('error', () => undefined);
    });
    server.on('error', reject);
  });
}

test('reads the server name and the protocols offered', async () => {
  const hello = readClientHello(await captured({ servername: 'Shop.Example.Test', ALPNProtocols: ['h2', 'http/1.1'] }));
  assert.deepEqual(hello, { kind: 'hello', serverName: 'shop.example.test', protocols: ['h2', 'http/1.1'] });
});

test('a ClientHello without a server name reads as none', async () => {
  const hello = readClientHello(await captured({ servername: '' }));
  assert.equal(hello.kind, 'hello');
  assert.equal(hello.kind === 'hello' ? hello.serverName : 'x', undefined);
});

test('asks for more until the whole message is there, byte by byte', async () => {
  const whole = await captured({ servername: 'a.test' });
  for (let n = 0; n < whole.length; n++) assert.equal(readClientHello(whole.subarray(0, n)).kind, 'more', `at ${n} bytes`);
  assert.equal(readClientHello(whole).kind, 'hello');
});

test('a handshake split over two records is gathered', async () => {
  const whole = await captured({ servername: 'split.test', ALPNProtocols: ['acme-tls/1'] });
  const body = whole.subarray(5, 5 + whole.readUInt16BE(3));
  const record = (part: Buffer) => Buffer.concat([Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part]);
  const cut = 40;
  const two = Buffer.concat([record(body.subarray(0, cut)), record(body.subarray(cut))]);
  assert.deepEqual(readClientHello(two), { kind: 'hello', serverName: 'split.test', protocols: ['acme-tls/1'] });
  assert.equal(readClientHello(two.subarray(0, 5 + cut + 3)).kind, 'more');
});

test('plain HTTP and damaged messages are refused with a reason', async () => {
  const http = readClientHello(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  assert.equal(http.kind, 'invalid');
  assert.match(http.kind === 'invalid' ? http.reason : '', /plain HTTP/);
  const whole = await captured({ servername: 'a.test' });
  const broken = Buffer.from(whole);
  broken[5] = 0x02; // a ServerHello where a ClientHello belongs
  assert.equal(readClientHello(broken).kind, 'invalid');
  const truncatedExtensions = Buffer.from(whole);
  const bodyLength = truncatedExtensions.readUInt16BE(3);
  // Claim more extension bytes than the message holds: malformed, not a crash.
  truncatedExtensions.writeUInt16BE(0xffff, 5 + bodyLength - 2 - 0);
  assert.notEqual(readClientHello(truncatedExtensions).kind, 'more');
  assert.equal(readClientHello(Buffer.from([0x16, 0x03, 0x01, 0xff, 0xff])).kind, 'invalid', 'a record past any real ClientHello');
  assert.equal(readClientHello(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x40, 0x00]), Buffer.alloc(0x4000)])).kind, 'invalid');
});
