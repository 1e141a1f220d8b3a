/**
 * The mailer against a real SMTP server on loopback: plain, STARTTLS, implicit TLS, a sign-in
 * through the URL, and the sentences a refusal becomes.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { createMailer, MailError } from '../../src/core/mail/smtp.ts';
import { startSmtpSink, selfSigned, type SinkOptions, type SmtpSink } from '../helpers/smtp-sink.ts';

const FROM = 'meerkat@gateway.example';
const MESSAGE = { to: ['ops@example.com', 'sec@example.com'], subject: 'Meerkat: 1 certificate expires within 30 days', text: 'Certificates expiring within 30 days, soonest first:\n\n- shop\n' };
const TLS = selfSigned();

async function sink(t: TestContext, o: SinkOptions = {}): Promise<SmtpSink> {
  const s = await startSmtpSink(o);
  t.after(() => s.close());
  return s;
}

async function refusal(p: Promise<void>): Promise<MailError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof MailError, `expected a MailError, got ${String(err)}`);
    return err;
  }
  assert.fail('the mail was taken');
}

test('a mail arrives with its sender, recipients, subject and text', async (t) => {
  const s = await sink(t);
  const mailer = createMailer(`smtp://127.0.0.1:${s.port}`, FROM);
  assert.equal(mailer.server, `127.0.0.1:${s.port}`);
  await mailer.send(MESSAGE);
  assert.equal(s.mails.length, 1);
  const mail = s.mails[0]!;
  assert.equal(mail.from, FROM);
  assert.deepEqual(mail.to, MESSAGE.to);
  assert.equal(mail.subject, MESSAGE.subject);
  assert.equal(mail.body.trimEnd(), MESSAGE.text.trimEnd());
  assert.match(mail.raw, /^Content-Type: text\/plain/im);
  assert.equal(mail.secure, false, 'the server offered no STARTTLS');
});

test('the user and password come from the URL, percent-decoded', async (t) => {
  const password = 'p@ss:w/rd%1';
  const s = await sink(t, { users: { 'digest@example.com': password } });
  const url = `smtp://${encodeURIComponent('digest@example.com')}:${encodeURIComponent(password)}@127.0.0.1:${s.port}`;
  await createMailer(url, FROM).send(MESSAGE);
  assert.equal(s.mails[0]?.user, 'digest@example.com');

  const wrong = await refusal(createMailer(`smtp://digest%40example.com:nope-${'x'.repeat(8)}@127.0.0.1:${s.port}`, FROM).send(MESSAGE));
  assert.equal(wrong.code, 'EAUTH');
  assert.equal(wrong.server, `127.0.0.1:${s.port}`);
  assert.match(wrong.message, new RegExp(`^The mail server 127\\.0\\.0\\.1:${s.port} refused the sign-in of "digest@example\\.com": .*535.*\\.$`));
  assert.doesNotMatch(wrong.message, /nope-x/, 'the password is never in the sentence');
  assert.equal(s.mails.length, 1);
});

test('smtp:// upgrades with STARTTLS when the server offers it, and verifies the certificate', async (t) => {
  const s = await sink(t, { tls: TLS });
  await createMailer(`smtp://127.0.0.1:${s.port}`, FROM, { ca: TLS.cert }).send(MESSAGE);
  assert.equal(s.mails[0]?.secure, true);

  const untrusted = await refusal(createMailer(`smtp://127.0.0.1:${s.port}`, FROM).send(MESSAGE));
  assert.match(untrusted.message, new RegExp(`^The TLS connection to the mail server 127\\.0\\.0\\.1:${s.port} failed: .*certificate`));
  assert.equal(s.mails.length, 1);
});

test('smtps:// speaks TLS from the first byte', async (t) => {
  const s = await sink(t, { tls: { ...TLS, implicit: true } });
  await createMailer(`smtps://127.0.0.1:${s.port}`, FROM, { ca: [TLS.cert] }).send(MESSAGE);
  assert.equal(s.mails[0]?.secure, true);
  assert.deepEqual(s.mails[0]?.to, MESSAGE.to);
});

test('a server refusing the recipient: a sentence naming the server, the recipient and the reason', async (t) => {
  const s = await sink(t, { refuse: ['ops@example.com', 'sec@example.com'] });
  const all = await refusal(createMailer(`smtp://127.0.0.1:${s.port}`, FROM).send(MESSAGE));
  assert.equal(all.code, 'EENVELOPE');
  assert.match(all.message, new RegExp(`^The mail server 127\\.0\\.0\\.1:${s.port} refused the recipients? .*ops@example\\.com.*: 550 5\\.1\\.1 No such mailbox here\\.$`));
  assert.equal(s.mails.length, 0);
});

test('one recipient refused among several: the others get the mail and the sentence says both', async (t) => {
  const s = await sink(t, { refuse: ['sec@example.com'] });
  const some = await refusal(createMailer(`smtp://127.0.0.1:${s.port}`, FROM).send(MESSAGE));
  assert.equal(some.message, `The mail server 127.0.0.1:${s.port} refused the recipient sec@example.com (550 5.1.1 No such mailbox here); the mail went to ops@example.com.`);
  assert.deepEqual(s.mails.map((m) => m.to), [['ops@example.com']]);
});

test('a server that cannot be reached', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const err = await refusal(createMailer(`smtp://127.0.0.1:${port}`, FROM).send(MESSAGE));
  assert.match(err.message, new RegExp(`^The mail server 127\\.0\\.0\\.1:${port} could not be reached: .*ECONNREFUSED.*\\.$`));
});

test('a URL that is not smtp:// or smtps:// is refused before any connection', () => {
  assert.throws(() => createMailer('http://127.0.0.1:25', FROM), /uses "http:"/);
});
