import t from 'tap';
import { waitFor } from '../../helpers/wait.ts';
import * as srt from '../srt/srt-helpers.ts';

/*
 * Issue 49.3, "a per-user SRT passphrase where the protocol allows": where `srt.passphrase` is
 * set, a user with `auth.services.srt_passphrase` publishes and plays with its key encrypted with
 * its own passphrase (libsrt keys the accepted socket with it in the handshake), not the global
 * one; other users and the global token keep `srt.passphrase`; removing it (null) goes back to the
 * global one. Real ffmpeg callers; the answers never show it.
 */

const KEY = 'key-a-8d2f61c0e94b7a35';
const OWN = 'customer-a-own-passphrase';

t.test('a user\'s own SRT passphrase', async (t) => {
  const app = await srt.startSrtApp(t, {}, { iam: { enable: true } });
  const user = {
    name: 'customer-a', auth: { services: { token: [KEY], srt_passphrase: OWN } },
    policies: [{ types: ['srt'], resource: 'live/customer-a/*', actions: ['PUBLISH', 'PLAY'] }],
  };
  const made = await app.request('POST', '/api/v3/iam/user', { body: user });
  t.equal(made.status, 200, made.text);
  t.equal(made.body.auth.services.srt_passphrase, '', 'never answered');
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: { name: 'short', auth: { services: { srt_passphrase: 'too short' } } } })).status, 400, 'SRT\'s 10 bytes at least');
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: { name: 'wide', auth: { services: { srt_passphrase: 'ü'.repeat(40) } } } })).status, 400, '40 characters of 80 bytes: over SRT\'s 79');
  const sid = (stream: string, mode: string, token: string) => encodeURIComponent(`${stream},mode:${mode},token:${token}`);
  const publisher = (stream: string, token: string, pass: string, seconds: number) =>
    srt.ffmpeg(t, [...srt.SOURCE, '-t', String(seconds), '-f', 'mpegts', srt.srtUrl(app.srtPort, sid(stream, 'publish', token), `&passphrase=${pass}`)], (seconds + 30) * 1000);
  const listed = async (stream: string) => (await app.request('GET', '/api/v3/srt')).body.publisher?.[stream] !== undefined;

  const wrong = publisher('live/customer-a/global', `customer-a:${KEY}`, srt.PASS, 5);
  await wrong.done;
  t.not(wrong.code, 0, 'its key with srt.passphrase: refused in the handshake');
  t.notOk(await listed('live/customer-a/global'));
  publisher('live/customer-a/cam', `customer-a:${KEY}`, OWN, 60);
  await waitFor(() => listed('live/customer-a/cam'), { timeout: 30_000, what: 'the user\'s publish with its own passphrase' });
  t.pass('its key with its own passphrase publishes');
  const reader = srt.ffmpeg(t, ['-i', srt.srtUrl(app.srtPort, sid('live/customer-a/cam', 'request', `customer-a:${KEY}`), `&passphrase=${OWN}`), '-frames:v', '5', '-f', 'null', '-'], 40_000);
  await reader.done;
  t.equal(reader.code, 0, `and plays with it (${reader.stderr.slice(-200)})`);
  const global = srt.ffmpeg(t, ['-i', srt.srtUrl(app.srtPort, sid('live/customer-a/cam', 'request', srt.TOKEN)), '-frames:v', '5', '-f', 'null', '-'], 40_000);
  await global.done;
  t.equal(global.code, 0, 'srt.token with srt.passphrase plays the same stream');

  t.equal((await app.request('PUT', '/api/v3/iam/user/customer-a', { body: { auth: { services: { srt_passphrase: null } } } })).status, 200, 'removed');
  const back = publisher('live/customer-a/again', `customer-a:${KEY}`, srt.PASS, 30);
  await waitFor(() => listed('live/customer-a/again'), { timeout: 30_000, what: 'the user\'s publish with srt.passphrase again' });
  back.kill();
  t.pass('without its own, its key uses srt.passphrase again');
});
