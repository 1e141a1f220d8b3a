/**
 * A gateway that stops drains the requests in flight: an answer the service streams (chunked)
 * while the doors drain reaches the client whole and well framed, with `connection: close` in its
 * head and nowhere else.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { startTestGateway } from '../helpers/gateway.ts';
import { signInAdmin } from '../helpers/admin.ts';

/** Everything the client reads until the gateway closes the connection (through TLS for an HTTPS door). */
function rawExchange(port: number, request: string, tls = false): { text: Promise<string> } {
  const socket = tls ? tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }) : connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.write(request);
  return {
    text: new Promise((resolve, reject) => {
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
      socket.on('error', reject);
    }),
  };
}

for (const door of ['plain', 'https'] as const) {
test(`an answer streamed while the gateway drains is framed whole on the ${door} door: its chunks, the last chunk, one connection: close in the head`, async () => {
  const held: ServerResponse[] = [];
  let arrived!: () => void;
  const first = new Promise<void>((r) => { arrived = r; });
  const service = createServer((req, res) => {
    if (req.url?.includes('early')) {
      // The head and a first chunk go out before the drain; the rest during it.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('early-');
    }
    held.push(res);
    arrived();
  });
  await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
  const t = await startTestGateway();
  let stopped: Promise<void> | undefined;
  try {
    const admin = await signInAdmin(t.url('control'));
    const origin = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    assert.equal((await admin.put('/api/routes/slow', { upstream: origin, paths: ['/slow'] })).status, 201);
    let port = Number(new URL(t.url('data')).port);
    const tls = door === 'https';
    if (tls) {
      const cert = await admin.post('/api/certificates', { source: 'self-signed', names: ['127.0.0.1'] });
      assert.equal(cert.status, 201, cert.text);
      assert.equal((await admin.put(`/api/certificates/${cert.json.id}/placement`, { planes: ['app'] })).status, 200);
      port = t.gw.doors.find((d) => d.plane === 'data' && d.protocol === 'https')!.port;
    }
    const late = rawExchange(port, 'GET /slow/late HTTP/1.1\r\nhost: drain.test\r\n\r\n', tls);
    await first;
    const early = rawExchange(port, 'GET /slow/early HTTP/1.1\r\nhost: drain.test\r\n\r\n', tls);
    while (held.length < 2) await new Promise((r) => setTimeout(r, 10));
    // Give the early answer's head and first chunk the time to reach the client.
    await new Promise((r) => setTimeout(r, 100));
    stopped = t.gw.stop();
    await new Promise((r) => setTimeout(r, 50));
    for (const res of held) {
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('drained');
      res.end();
    }
    const lateText = await late.text;
    const earlyText = await early.text;
    for (const [text, body] of [[lateText, 'drained'], [earlyText, 'early-drained']] as const) {
      const cut = text.indexOf('\r\n\r\n');
      assert.ok(cut > 0, text);
      const head = text.slice(0, cut);
      const rest = text.slice(cut + 4);
      assert.match(head, /^HTTP\/1\.1 200 /);
      assert.match(head, /transfer-encoding: chunked/i);
      // The chunked body, decoded strictly: sizes, data, CRLFs, the last chunk and nothing after.
      let at = 0;
      let decoded = '';
      for (;;) {
        const eol = rest.indexOf('\r\n', at);
        assert.ok(eol > at, `a chunk size line: ${JSON.stringify(rest)}`);
        const size = rest.slice(at, eol);
        assert.match(size, /^[0-9a-fA-F]+$/, `chunk size ${JSON.stringify(size)} in ${JSON.stringify(rest)}`);
        const n = parseInt(size, 16);
        at = eol + 2;
        if (n === 0) {
          assert.equal(rest.slice(at), '\r\n', `nothing after the last chunk: ${JSON.stringify(rest)}`);
          break;
        }
        decoded += rest.slice(at, at + n);
        assert.equal(rest.slice(at + n, at + n + 2), '\r\n', JSON.stringify(rest));
        at += n + 2;
      }
      assert.equal(decoded, body);
    }
    // The answer whose head went out during the drain says it closes the connection.
    assert.match(lateText.slice(0, lateText.indexOf('\r\n\r\n')), /\r\nconnection: close/i);
  } finally {
    await (stopped ?? t.gw.stop());
    await t.close().catch(() => undefined);
    await new Promise<void>((r) => service.close(() => r()));
  }
});
}
