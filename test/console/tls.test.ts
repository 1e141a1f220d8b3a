/**
 * The TLS screen in a real browser (spec 1.2, 2.5, 3.2; CONTRACT.md "TLS"): certificates made,
 * imported and adopted through the page, placed on the console with a countdown on the gateway's
 * clock; the plain port switch refused with the API's sentence while the browser itself is on
 * HTTP, then allowed from the console's HTTPS door once HTTP fell silent; doors, redirect, trusted
 * and ACME authorities; the local machine assistant. One community gateway on the test clock, one
 * licensed gateway whose runtime publishes no console HTTPS port.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { expectRefusedScreen, launchBrowser, openConsole, signInThroughPage, type ConsolePage } from '../helpers/browser.ts';
import { callHttps } from '../helpers/https.ts';
import { makeCa, type PrivateCa } from '../helpers/private-ca.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';

let browser: Browser;
/** The community gateway on the test clock, and the licensed one (started together: each takes a while). */
let t: TestGateway;
let licensed: TestGateway;

before(async () => {
  [browser, t, licensed] = await Promise.all([
    launchBrowser(),
    startTestGateway({ GATEWAY_CLOCK: 'manual' }),
    startTestGateway({ GATEWAY_EDITION: 'licensed', GATEWAY_PUBLIC_PORTS: 'app=443,app-http=80' }),
  ]);
});

after(async () => {
  await browser?.close();
  await Promise.all([t?.close(), licensed?.close()]);
});

/** The console on an HTTPS door whose self-signed certificate the browser is told to accept. */
const openConsoleHttps = (base: string): Promise<ConsolePage> => openConsole(browser, base, undefined, true);

const row = (page: Page, text: string) => page.getByRole('row').filter({ hasText: text });
const placement = (page: Page, cert: string, plane: string) => page.getByRole('group', { name: `Placement of ${cert}` }).getByRole('checkbox', { name: plane });

function httpsPort(t: TestGateway, plane: 'control' | 'data'): number | undefined {
  return t.gw.doors.find((d) => d.plane === plane && d.protocol === 'https')?.port;
}

describe('a community gateway on the test clock', () => {
  let root: Admin;
  let control: string;
  let ca: PrivateCa;
  let kit: OpenSslKit;

  before(async () => {
    control = t.url('control');
    root = await signInAdmin(control);
    ca = makeCa();
    kit = openSslKit();
    kit.authority('Meerkat Signing Root');
  });

  after(() => {
    ca?.remove();
    kit?.remove();
  });

  test('an account without infra-admin opens the screen and reads the API\'s refusal', async () => {
    const made = await root.post('/api/accounts', { name: 'sched-ops', password: 'sched-ops-password-1', capabilities: ['app-admin'] });
    assert.equal(made.status, 201, made.text);
    const own = await signInAdmin(control, 'sched-ops', 'sched-ops-password-1');
    const refusal = await own.get('/api/certificates');
    assert.equal(refusal.status, 403, refusal.text);

    await expectRefusedScreen(browser, control, {
      name: 'sched-ops', password: 'sched-ops-password-1', path: '/tls', heading: 'TLS', detail: refusal.json.detail,
      absent: (page) => page.getByRole('button', { name: 'Create the certificate' }),
    });
  });

  test('a self-signed certificate made in the page, placed on the console, counts down on the gateway\'s clock; HTTP off is refused with the API\'s sentence', async () => {
    const c = await openConsole(browser, control);
    try {
      await signInThroughPage(c, 'root', undefined, '/tls');
      const page = c.page;
      await page.getByRole('heading', { level: 1, name: 'TLS' }).waitFor();
      await page.getByText('No certificate is held yet').waitFor();
      // The community edition's refusal of ACME is shown as the API words it.
      const acme = await root.get('/api/acme/authorities');
      assert.equal(acme.json.code, 'licensed-edition');
      await page.getByText(acme.json.detail).first().waitFor();
      assert.equal(await page.getByRole('option', { name: 'Ask an ACME authority' }).count(), 0, 'no ACME way on the community edition');

      await page.getByLabel('Way to obtain it').selectOption({ label: 'Self-signed' });
      await page.getByLabel('Name (optional)').fill('console-local');
      await page.getByLabel('Names', { exact: true }).fill('localhost, 127.0.0.1');
      await page.getByLabel('Valid for (days)').fill('30');
      await page.getByRole('button', { name: 'Create the certificate' }).click();
      await page.getByText('“console-local” is held').waitFor();
      const cert = row(page, 'console-local');
      await cert.getByText('active', { exact: true }).waitFor();
      assert.match(await cert.textContent() ?? '', /expires in (30 d|29 d 23 h)/);
      assert.match(await cert.textContent() ?? '', /localhost, 127\.0\.0\.1/);

      assert.equal(httpsPort(t, 'control'), undefined, 'no console HTTPS door yet');
      await page.getByText('The console has no HTTPS door: place a certificate on the console to open one.').waitFor();
      await placement(page, 'console-local', 'Console').check();
      await page.getByRole('link', { name: 'Open the console over HTTPS' }).waitFor();
      const port = httpsPort(t, 'control');
      assert.ok(port, 'placing the certificate opened the console\'s HTTPS door');
      assert.equal(await page.getByRole('link', { name: 'Open the console over HTTPS' }).getAttribute('href'), `https://127.0.0.1:${port}/tls`);
      assert.deepEqual((await root.get('/api/certificates')).json.certificates[0].planes, ['console']);

      // Six hours on the gateway's clock, far from the browser's: the next read counts down from there.
      assert.equal((await root.post('/__clock/advance', { by: 'PT6H' })).status, 200);
      await cert.getByText(/expires in 29 d 1[78] h/).waitFor();

      // The console's traffic: this very browser on HTTP, nothing on HTTPS.
      const traffic = page.getByRole('table', { name: 'Console traffic in the last 30 s' });
      await traffic.getByRole('row').filter({ hasText: 'HTTP' }).filter({ hasText: '127.0.0.1' }).first().waitFor();
      await traffic.getByRole('row').filter({ hasText: 'HTTPS' }).getByText('Nothing in the last 30 s').waitFor();

      const expected = await root.put('/api/settings/tls/ports/console', { http: false });
      assert.equal(expected.status, 409, expected.text);
      assert.equal(expected.json.code, 'tls.http-in-use');
      await page.getByRole('button', { name: 'Switch HTTP off for the Console plane' }).click();
      const alert = page.getByRole('alert').filter({ hasText: 'HTTP stays on' });
      await alert.waitFor();
      assert.equal(await alert.textContent(), expected.json.detail);
      assert.match(expected.json.detail, /this very request/);
      assert.deepEqual((await root.get('/api/settings/tls')).json.closed.console, [], 'HTTP stayed on');
      c.expectClean();
    } finally {
      await c.context.close();
    }
  });

  test('a certificate of the private authority, imported from files, takes the console\'s name only when the operator says so', async () => {
    const leaf = ca.leaf(['localhost', '127.0.0.1'], 20);
    const c = await openConsole(browser, control);
    try {
      await signInThroughPage(c, 'root', undefined, '/tls');
      const page = c.page;
      await page.getByLabel('Way to obtain it').selectOption({ label: 'Import a certificate and its key' });
      await page.getByLabel('Name (optional)').fill('private-ca-leaf');
      await page.getByLabel('Certificate: file', { exact: true }).setInputFiles({ name: 'leaf.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from(leaf.cert) });
      await page.getByLabel('Private key: file', { exact: true }).setInputFiles({ name: 'leaf-key.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from(leaf.key) });
      assert.equal(await page.getByLabel('Certificate', { exact: true }).inputValue(), leaf.cert, 'the file\'s text is in the box');
      await page.getByRole('button', { name: 'Import', exact: true }).click();
      const cert = row(page, 'private-ca-leaf');
      await cert.getByText('active', { exact: true }).waitFor();
      assert.match(await cert.textContent() ?? '', /issued by .*Meerkat Test Authority/);
      assert.match(await cert.textContent() ?? '', /expires in (20 d|19 d)/);

      await placement(page, 'private-ca-leaf', 'Console').click();
      const clash = page.getByRole('alert').filter({ hasText: 'already answers' });
      await clash.waitFor();
      assert.match(await clash.textContent() ?? '', /"console-local" already answers localhost/);
      // Nothing placed: the tick is back off (with the sentence, not after the list is read again).
      await page.getByRole('group', { name: 'Placement of private-ca-leaf' }).getByRole('checkbox', { name: 'Console', checked: false }).waitFor({ timeout: 2_000 });
      await page.getByRole('button', { name: 'Place private-ca-leaf in its stead' }).click();
      await page.getByRole('group', { name: 'Placement of private-ca-leaf' }).getByRole('checkbox', { name: 'Console', checked: true }).waitFor();
      await page.getByRole('group', { name: 'Placement of console-local' }).getByRole('checkbox', { name: 'Console', checked: false }).waitFor();
      assert.equal(await page.getByRole('alert').count(), 0, 'the refusal is gone');
      const listed = (await root.get('/api/certificates')).json.certificates as Array<{ name: string; planes: string[] }>;
      assert.deepEqual(listed.map((x) => [x.name, x.planes]), [['console-local', []], ['private-ca-leaf', ['console']]]);
      c.expectClean();
    } finally {
      await c.context.close();
    }
  });

  test('a signing request: made in the page, downloaded, signed by an authority, its answer adopted', async () => {
    const c = await openConsole(browser, control);
    try {
      await signInThroughPage(c, 'root', undefined, '/tls');
      const page = c.page;
      await page.getByLabel('Way to obtain it').selectOption({ label: 'Signing request (an authority signs it)' });
      await page.getByLabel('Name (optional)').fill('app-request');
      await page.getByLabel('Names', { exact: true }).fill('app.example.test');
      await page.getByLabel('Organisation').fill('Meerkat Tests');
      await page.getByRole('button', { name: 'Make the signing request' }).click();
      const cert = row(page, 'app-request');
      await cert.getByText('pending', { exact: true }).waitFor();
      assert.equal(await placement(page, 'app-request', 'Application').isDisabled(), true, 'a pending request serves nothing');

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download the signing request of app-request' }).click(),
      ]);
      const csr = readFileSync(await download.path(), 'utf8');
      assert.match(csr, /^-----BEGIN CERTIFICATE REQUEST-----/);
      assert.match(download.suggestedFilename(), /\.csr$/);
      kit.write('app.csr', csr);
      assert.match(kit.run('req', '-in', 'app.csr', '-noout', '-subject'), /O ?= ?Meerkat Tests/);
      kit.write('app.ext', 'basicConstraints=CA:false\nsubjectAltName=DNS:app.example.test\n');
      kit.run('x509', '-req', '-in', 'app.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'app.pem', '-days', '15', '-extfile', 'app.ext');

      await page.getByRole('button', { name: 'Adopt the answer to app-request' }).click();
      const form = page.getByRole('form', { name: 'Answer to app-request' });
      // An answer for another key is refused with the API's sentence.
      await form.getByLabel('Signed certificate', { exact: true }).fill(ca.leaf(['app.example.test']).cert);
      await form.getByRole('button', { name: 'Adopt the answer' }).click();
      await form.getByRole('alert').waitFor();
      assert.match(await form.getByRole('alert').textContent() ?? '', /key/i);
      await form.getByLabel('Signed certificate: file').setInputFiles({ name: 'app.pem', mimeType: 'application/x-pem-file', buffer: Buffer.from(kit.read('app.pem')) });
      await form.getByRole('button', { name: 'Adopt the answer' }).click();
      await cert.getByText('active', { exact: true }).waitFor();
      assert.match(await cert.textContent() ?? '', /issued by .*Meerkat Signing Root/);
      assert.match(await cert.textContent() ?? '', /expires in (15 d|14 d)/);
      c.expectClean();
    } finally {
      await c.context.close();
    }
  });

  test('trusted authorities: a PEM with a key refused with the reason, a certificate added, then removed', async () => {
    const expected = await root.post('/api/trusted-authorities', { name: 'Private CA', pem: ca.cert + ca.key });
    assert.equal(expected.status, 400, expected.text);
    assert.equal(expected.json.code, 'tls.key-in-authority');
    const c = await openConsole(browser, control);
    try {
      await signInThroughPage(c, 'root', undefined, '/tls');
      const page = c.page;
      const form = page.getByRole('form', { name: 'Add a trusted authority' });
      await form.getByLabel('Authority name').fill('Private CA');
      await form.getByLabel('Authority certificate', { exact: true }).fill(ca.cert + ca.key);
      await form.getByRole('button', { name: 'Add the authority' }).click();
      await form.getByRole('alert').waitFor();
      assert.equal(await form.getByRole('alert').textContent(), expected.json.detail);

      await form.getByLabel('Authority certificate', { exact: true }).fill(ca.cert);
      await form.getByRole('button', { name: 'Add the authority' }).click();
      const listed = page.getByRole('table', { name: 'Trusted authorities' }).getByRole('row').filter({ hasText: 'Private CA' });
      await listed.waitFor();
      assert.match(await listed.textContent() ?? '', /CN ?= ?Meerkat Test Authority/, await listed.textContent() ?? '');
      const api = (await root.get('/api/trusted-authorities')).json.authorities;
      assert.equal(api.length, 1);
      assert.match(await listed.textContent() ?? '', new RegExp(api[0].fingerprint));

      await listed.getByRole('button', { name: 'Remove Private CA' }).click();
      await listed.getByRole('button', { name: 'Confirm removal of Private CA' }).click();
      await page.getByText('No authority added: only the public ones are trusted.').waitFor();
      assert.deepEqual((await root.get('/api/trusted-authorities')).json.authorities, []);
      c.expectClean();
    } finally {
      await c.context.close();
    }
  });

  test('doors and redirect: refusals as the API gives them, a proxy declared for the application', async () => {
    const c = await openConsole(browser, control);
    try {
      await signInThroughPage(c, 'root', undefined, '/tls');
      const page = c.page;
      const app = page.getByRole('group', { name: 'Application door' });
      await app.getByLabel('Public names').fill('shop.example.test');
      await app.getByRole('button', { name: 'Save the Application door' }).click();
      await app.getByRole('alert').waitFor();
      const refused = await root.put('/api/settings/tls/doors/app', { proxied: false, names: ['shop.example.test'], proxyAddresses: [] });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(await app.getByRole('alert').textContent(), refused.json.detail);

      await app.getByLabel('HTTPS served by').selectOption({ label: 'A proxy in front' });
      await app.getByLabel('Proxy addresses').fill('10.0.0.0/8 192.168.1.10');
      await app.getByRole('button', { name: 'Save the Application door' }).click();
      await app.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const door = (await root.get('/api/settings/tls')).json.doors.app;
      assert.deepEqual([door.proxied, door.names, door.proxyAddresses], [true, ['shop.example.test'], ['10.0.0.0/8', '192.168.1.10']]);

      await page.getByText('GATEWAY_INTERNAL_NAMES is not set').waitFor();

      const redirect = page.getByRole('form', { name: 'Redirect and HSTS' });
      await redirect.getByLabel('Force HTTPS on the application plane (308)').check();
      await redirect.getByLabel('HSTS max-age (seconds)').fill('3600');
      await redirect.getByRole('button', { name: 'Save the redirect' }).click();
      await redirect.getByRole('alert').waitFor();
      const expected = await root.put('/api/settings/tls/redirect', { forceHttps: true, hstsMaxAge: 3600 });
      assert.equal(expected.status, 409, expected.text);
      assert.equal(await redirect.getByRole('alert').textContent(), expected.json.detail);
      await redirect.getByLabel('Force HTTPS on the application plane (308)').uncheck();
      await redirect.getByRole('button', { name: 'Save the redirect' }).click();
      await redirect.getByRole('alert').waitFor({ state: 'detached' });
      assert.deepEqual((await root.get('/api/settings/tls')).json.redirect, { forceHttps: false, hstsMaxAge: 3600 });
      c.expectClean();
    } finally {
      await c.context.close();
    }
  });

  test('the local machine assistant: steps per operating system with this gateway\'s names and ports; the authority\'s key stays home; on a phone', async () => {
    const c = await openConsole(browser, control, { width: 390, height: 844 });
    try {
      await signInThroughPage(c, 'root', undefined, '/tls');
      const page = c.page;
      const port = httpsPort(t, 'control');
      assert.ok(port);
      const os = page.getByLabel('Operating system');
      await os.selectOption({ label: 'Linux' });
      let steps = await page.getByRole('list', { name: 'Steps on Linux' }).textContent() ?? '';
      assert.match(steps, /echo '127\.0\.0\.1 console\.meerkat\.test shop\.example\.test' \| sudo tee -a \/etc\/hosts/);
      assert.match(steps, /sudo apt install mkcert libnss3-tools/);
      assert.match(steps, /mkcert -install/);
      assert.match(steps, /mkcert -cert-file meerkat-local\.pem -key-file meerkat-local-key\.pem console\.meerkat\.test shop\.example\.test localhost 127\.0\.0\.1/);
      assert.match(steps, /tick Console and Application/);
      assert.match(steps, new RegExp(`https://console\\.meerkat\\.test:${port}/`), 'the console\'s HTTPS port');

      await os.selectOption({ label: 'macOS' });
      steps = await page.getByRole('list', { name: 'Steps on macOS' }).textContent() ?? '';
      assert.match(steps, /brew install mkcert nss/);
      assert.match(steps, /sudo tee -a \/etc\/hosts/);

      await os.selectOption({ label: 'Windows' });
      steps = await page.getByRole('list', { name: 'Steps on Windows' }).textContent() ?? '';
      assert.match(steps, /System32\\drivers\\etc\\hosts/);
      assert.match(steps, /choco install mkcert/);
      const note = await page.getByRole('note').textContent() ?? '';
      assert.match(note, /private key .* is never shared/);
      assert.match(note, /%LOCALAPPDATA%\\mkcert/);

      const width = await page.evaluate<number>('document.documentElement.scrollWidth');
      assert.ok(width <= 390, `the page fits a phone's width (${width} px)`);
      c.expectClean();
    } finally {
      await c.context.close();
    }
  });

  test('over the console\'s HTTPS door: sign-in, the live feed on wss, HTTP switched off once silent for 30 s, the last certificate kept while in use', async () => {
    const port = httpsPort(t, 'control');
    assert.ok(port, 'the console\'s HTTPS door is open');
    const base = `https://127.0.0.1:${port}`;
    const c = await openConsoleHttps(base);
    try {
      const sockets: string[] = [];
      c.page.on('websocket', (ws) => sockets.push(ws.url()));
      await signInThroughPage(c, 'root', undefined, '/tls');
      const page = c.page;
      await page.getByText('This page is open through the console\'s HTTPS door.').waitFor();
      assert.equal(await page.getByRole('link', { name: 'Open the console over HTTPS' }).count(), 0);

      // The live feeds of this origin open as wss, with the session the page signed in with.
      // (A string: the test's TypeScript knows no DOM. The address is built as console/src/live.ts builds it.)
      const hello = await page.evaluate<string>(`new Promise((resolve, reject) => {
        const url = new URL('/api/schedules/live', location.href);
        url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
        const ws = new WebSocket(url);
        ws.onmessage = (ev) => { resolve(JSON.parse(String(ev.data)).type); ws.close(); };
        ws.onerror = () => reject(new Error('the feed did not open'));
      })`);
      assert.equal(hello, 'hello');
      assert.deepEqual(sockets, [`wss://127.0.0.1:${port}/api/schedules/live`]);

      // Nothing comes through plain HTTP any more (every other browser is closed): 31 s on the clock.
      assert.equal((await callHttps(`${base}/__clock/advance`, { method: 'POST', body: { by: 'PT31S' } })).status, 200);
      const traffic = page.getByRole('table', { name: 'Console traffic in the last 30 s' });
      await traffic.getByRole('row').filter({ hasText: /^HTTP(?!S)/ }).getByText('Nothing in the last 30 s').waitFor();
      await traffic.getByRole('row').filter({ hasText: 'HTTPS' }).getByText('127.0.0.1').waitFor();

      await page.getByRole('button', { name: 'Switch HTTP off for the Console plane' }).click();
      const consoleRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Console', exact: true }) });
      await consoleRow.getByText('Off: 127.0.0.1 only').waitFor();
      const settings = await callHttps(`${base}/api/settings/tls`, { headers: { cookie: (await c.context.cookies()).map((k) => `${k.name}=${k.value}`).join('; ') } });
      assert.deepEqual(settings.json.closed.console, ['http']);

      // The last certificate of a plane whose HTTP is off stays (rule 6), with the API's sentence.
      const cert = row(page, 'private-ca-leaf');
      await cert.getByRole('button', { name: 'Remove private-ca-leaf' }).click();
      await cert.getByRole('button', { name: 'Confirm removal of private-ca-leaf' }).click();
      await page.getByRole('alert').filter({ hasText: 'last certificate' }).waitFor();
      assert.match(await page.getByRole('alert').filter({ hasText: 'last certificate' }).textContent() ?? '', /^This is the last certificate of the console plane and its plain HTTP port is off/);
      await c.screenshot('tls');

      // HTTP on again: now the certificate stays because this very page uses HTTPS (rule 7).
      await page.getByRole('button', { name: 'Switch HTTP on for the Console plane' }).click();
      await consoleRow.getByText('On', { exact: true }).waitFor();
      await cert.getByRole('button', { name: 'Remove private-ca-leaf' }).click();
      await cert.getByRole('button', { name: 'Confirm removal of private-ca-leaf' }).click();
      const inUse = page.getByRole('alert').filter({ hasText: 'called through HTTPS' });
      await inUse.waitFor();
      assert.match(await inUse.textContent() ?? '', /^This is the console's last certificate and the console was called through HTTPS in the last 30 s, by this very request/);
      assert.equal((await callHttps(`${base}/healthz`)).status, 200, 'the door still serves');
      c.expectClean();
    } finally {
      await c.context.close();
    }
  });
});

describe('a licensed gateway whose runtime publishes no console HTTPS port', () => {
  let root: Admin;
  let control: string;

  before(async () => {
    control = licensed.url('control');
    root = await signInAdmin(control);
  });

  test('no link to an unpublished door; an ACME authority added and an order made in the page', async () => {
    const made = await root.post('/api/certificates', { source: 'self-signed', name: 'inside', names: ['localhost'] });
    assert.equal(made.status, 201, made.text);
    assert.equal((await root.put(`/api/certificates/${made.json.id}/placement`, { planes: ['console'] })).status, 200);
    const c = await openConsole(browser, control);
    try {
      await signInThroughPage(c, 'root', undefined, '/tls');
      const page = c.page;
      await page.getByText('The runtime publishes no HTTPS port for the console, so there is no link to offer').waitFor();
      assert.equal(await page.getByRole('link', { name: 'Open the console over HTTPS' }).count(), 0);
      await page.getByText('No ACME authority yet.').waitFor();

      const form = page.getByRole('form', { name: 'Add an ACME authority' });
      await form.getByLabel('Authority label').fill('Local Pebble');
      await form.getByLabel('Directory URL').fill('https://127.0.0.1:14000/dir');
      await form.getByLabel('Contact e-mail').fill('ops@example.test');
      await form.getByLabel('I accept the authority\'s terms of service').check();
      await form.getByRole('button', { name: 'Add the ACME authority' }).click();
      const listed = page.getByRole('table', { name: 'ACME authorities' }).getByRole('row').filter({ hasText: 'Local Pebble' });
      await listed.getByText('accepted', { exact: true }).waitFor();
      assert.match(await listed.textContent() ?? '', /not armed/);

      await page.getByLabel('Way to obtain it').selectOption({ label: 'Ask an ACME authority' });
      await page.getByLabel('Authority', { exact: true }).selectOption({ label: 'Local Pebble' });
      await page.getByLabel('Names (full host names)').fill('app.example.test');
      await page.getByRole('button', { name: 'Order', exact: true }).click();
      const order = row(page, 'Ask Local Pebble');
      await order.getByText('requesting', { exact: true }).waitFor();
      const orders = (await root.get('/api/certificates')).json.certificates.filter((x: { source: string }) => x.source === 'acme');
      assert.deepEqual(orders.map((x: { name: string; names: string[]; planes: string[] }) => [x.name, x.names, x.planes]), [['Ask Local Pebble', ['app.example.test'], []]]);
      c.expectClean();
    } finally {
      await c.context.close();
    }
  });
});
