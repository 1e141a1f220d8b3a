// http.mjs - one request from a bench to a target it started: readiness checks, not load.
// http: goes through fetch; https: through node:https, because the targets present the bench's own test
// certificate, which fetch cannot be told to trust. The certificate is verified against `tls.ca` for
// `tls.servername`, so a check also proves which certificate a target presents.
import https from 'node:https';

/**
 * { status, body } of one request; throws on a network or TLS error (e.cause?.code or e.code says which).
 * opts: method, headers, body, timeoutMs [2000], tls: { ca, servername } (required for https: URLs).
 */
export async function request(url, { method = 'GET', headers = {}, body, timeoutMs = 2000, tls } = {}) {
  if (!url.startsWith('https:')) {
    const r = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(timeoutMs) });
    return { status: r.status, body: await r.text() };
  }
  if (!tls?.ca) throw new Error(`${url}: an https check needs the certificate authority to verify against`);
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca: tls.ca, servername: tls.servername, agent: false, timeout: timeoutMs }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}
