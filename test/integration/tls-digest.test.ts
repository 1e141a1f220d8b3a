/**
 * The daily expiry digest (spec 1.2 rule 25; CONTRACT.md "Expiry digest"): through a real SMTP
 * server on loopback when GATEWAY_SMTP_URL is set, one operational log line otherwise; once a
 * day on the test clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { advanceClock } from '../helpers/scheduler.ts';
import { openSslKit } from '../helpers/openssl.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';

/** A certificate of `days` validity, imported (openssl, so its dates are the machine's own). */
async function imported(admin: Admin, name: string, days: number): Promise<string> {
  const kit = openSslKit();
  try {
    kit.authority();
    const leaf = kit.leaf(name, `DNS:${name}`, { days });
    const a = await admin.post('/api/certificates', { source: 'import', cert: leaf.cert, key: leaf.key, name });
    assert.equal(a.status, 201, a.text);
    return a.json.id;
  } finally {
    kit.remove();
  }
}

async function until<T>(fn: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) assert.fail('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('the digest is mailed once a day: expiring within the horizon, a covered reserve certificate left out', async () => {
  const sink = await startSmtpSink();
  const t = await startTestGateway({
    GATEWAY_CLOCK: 'manual', GATEWAY_SMTP_URL: `smtp://127.0.0.1:${sink.port}`, GATEWAY_DIGEST_TO: 'ops@example.test,sec@example.test',
    GATEWAY_SMTP_FROM: 'meerkat@gateway.test', GATEWAY_DIGEST_HORIZON: '15',
  });
  try {
    const admin = await signInAdmin(t.url('control'));
    const soon = await imported(admin, 'soon.example.test', 10);
    await imported(admin, 'later.example.test', 60);
    assert.equal((await admin.put(`/api/certificates/${soon}/placement`, { planes: ['app'] })).status, 200);
    // In reserve, and soon.example.test's name is carried by no longer-lived one: it is named too.
    await imported(admin, 'reserve.example.test', 5);
    await advanceClock(t.url('control'), 'PT23H');
    assert.equal(sink.mails.length, 0, 'not before a day has passed');
    await advanceClock(t.url('control'), 'PT1H');
    const mail = await until(() => sink.mails[0]);
    assert.deepEqual([...mail.to].sort(), ['ops@example.test', 'sec@example.test']);
    assert.equal(mail.from, 'meerkat@gateway.test');
    assert.match(mail.subject, /expir/i);
    assert.match(mail.body, /soon\.example\.test/);
    assert.match(mail.body, /reserve\.example\.test/);
    assert.doesNotMatch(mail.body, /later\.example\.test/, 'outside the 15-day horizon');
    assert.doesNotMatch(mail.raw, /PRIVATE KEY/);
    await advanceClock(t.url('control'), 'PT24H');
    await until(() => sink.mails[1]);
  } finally {
    await t.close();
    await sink.close();
  }
});

test('without a mail server the digest is one operational log line', async () => {
  const t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  try {
    const admin = await signInAdmin(t.url('control'));
    await imported(admin, 'soon.example.test', 3);
    await advanceClock(t.url('control'), 'PT24H');
    const line = await until(() => t.logs.find((r) => /expir/i.test(r.msg) && r.level === 'warn'));
    assert.match(String(line.attrs?.expiring ?? ''), /soon\.example\.test/);
  } finally {
    await t.close();
  }
});
