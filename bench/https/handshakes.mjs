// handshakes.mjs - which handshakes a connection-per-request load really makes against one HTTPS target.
//
// wrk reconnects with the same OpenSSL object (SSL_shutdown + SSL_clear), which keeps the session it last held:
//   - TLS 1.3: OpenSSL's client holds the newest ticket the server sent before the response, and uses a ticket
//     once. A server that sends a new ticket on a resumed connection is resumed every time; one that does not
//     gets a full handshake every other connection;
//   - TLS 1.2 without the ticket extension (the `close-full` load): only a session id is offered, and servers
//     keeping no session cache (nginx's default, node:https's) answer with a full handshake.
// This probe makes a few such connections one after the other with node:tls, following the same rules, and
// says what each was (full or resumed, tickets received before the response), with what was negotiated.
import { constants } from 'node:crypto';
import tls from 'node:tls';

function connectOnce(u, { ca, servername, session, maxVersion, noTicket, headers, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({
      host: u.hostname, port: Number(u.port), servername, ca, session, maxVersion,
      secureOptions: noTicket ? constants.SSL_OP_NO_TICKET : 0,
    });
    const out = { kind: '?', tickets: 0, ticket: undefined, session: undefined, status: '', negotiated: '' };
    let answered = false;
    const timer = setTimeout(() => s.destroy(new Error('probe timeout')), timeoutMs);
    s.on('session', (sess) => {
      out.session = sess;
      if (!answered) { out.tickets++; out.ticket = sess; } // what wrk's client gets to keep: read before the response
    });
    s.on('secureConnect', () => {
      out.kind = s.isSessionReused() ? 'resumed' : 'full';
      const c = s.getCipher(), k = s.getEphemeralKeyInfo(), cert = s.getPeerCertificate();
      const key = cert.asn1Curve ? `ECDSA ${cert.nistCurve ?? cert.asn1Curve}` : cert.bits ? `RSA ${cert.bits}` : '?';
      out.negotiated = `${s.getProtocol()} ${c?.standardName ?? c?.name} ${k?.name ?? k?.type ?? '-'} ${key}`;
      const lines = [`GET ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, ...headers, 'Connection: close', '', ''];
      s.write(lines.join('\r\n'));
    });
    s.on('data', (d) => {
      if (!answered) out.status = d.toString('latin1').split('\r\n', 1)[0];
      answered = true;
    });
    s.on('error', (e) => { clearTimeout(timer); reject(e); });
    s.on('close', () => { clearTimeout(timer); resolve(out); });
    s.resume();
  });
}

/**
 * n connections in a row to `url` (headers: 'Name: value' lines). mode 'tls13': tickets used once, as OpenSSL's
 * client does; 'tls12-noticket': TLS 1.2, no ticket extension, the last session offered again.
 * Returns { negotiated, kinds: ['full (2 tickets)', 'resumed (1 ticket)', ...], resumed (how many of the
 * connections after the first were resumed), status (the first answer's status line) }.
 */
export async function probeHandshakes(url, { ca, servername, mode = 'tls13', headers = [], n = 6, timeoutMs = 5000 }) {
  const u = new URL(url);
  const tls12 = mode === 'tls12-noticket';
  let offer;
  const kinds = [];
  let negotiated = '', status = '', resumed = 0;
  for (let i = 0; i < n; i++) {
    const r = await connectOnce(u, { ca, servername, session: offer, maxVersion: tls12 ? 'TLSv1.2' : 'TLSv1.3', noTicket: tls12, headers, timeoutMs });
    kinds.push(!tls12 && r.tickets ? `${r.kind} (${r.tickets} ticket${r.tickets > 1 ? 's' : ''})` : r.kind);
    if (i === 0) { negotiated = r.negotiated; status = r.status; }
    if (i > 0 && r.kind === 'resumed') resumed++;
    offer = tls12 ? r.session : r.ticket; // TLS 1.3: a ticket is not used twice
  }
  return { negotiated, kinds, resumed, status };
}
