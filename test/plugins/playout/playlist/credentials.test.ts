import t from 'tap';
import { join } from 'node:path';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { eventsRef, maskCredentials, maskDeep, type CoreEvent, type EventsService } from '../../../../sdk/index.ts';
import { portRange } from '../helpers.ts';
import { makeClip } from './media.ts';

/*
 * Issue 43 points 8 and 7 while a playlist plays (real ffmpeg): a URL item with credentials that
 * does not answer is skipped, and neither the service's log nor any event holds its password or
 * token; a process whose input has them fails the same way. A playlist file rewritten after its
 * insert to name a file outside the disk root is skipped at its start, never opened.
 */

const PASSWORD = 'S3cretPw0rd';
const TOKEN = 'T0kenValue9';
const SECRETS = [PASSWORD, TOKEN, 'P4ssphrase7'];

t.test('maskCredentials: user info, query tokens, SRT stream ids; nothing else changes', async (t) => {
  t.equal(maskCredentials(`http://admin:${PASSWORD}@127.0.0.1:9/x.mp4?token=${TOKEN}&a=1`), 'http://***@127.0.0.1:9/x.mp4?token=***&a=1');
  t.equal(maskCredentials(`rtmp://u@h/live/x: Connection refused`), 'rtmp://***@h/live/x: Connection refused');
  t.equal(maskCredentials(`http://h/x?token=${TOKEN}: Connection refused`), 'http://h/x?token=***: Connection refused', 'ffmpeg\'s colon after the URL stays');
  t.equal(maskCredentials(`srt://h:6000?mode=caller&streamid=live/x,mode:publish,token:${TOKEN}&passphrase=P4ssphrase7`),
    'srt://h:6000?mode=caller&streamid=live/x,mode:publish,token:***&passphrase=***');
  t.equal(maskCredentials(`srt://h:6000?streamid=live%2Fx%2Ctoken%3A${TOKEN}`), 'srt://h:6000?streamid=live%2Fx%2Ctoken%3A***');
  t.equal(maskCredentials(`{"msg":"x","url":"https://a:b@h/p"}`), '{"msg":"x","url":"https://***@h/p"}', 'inside JSON text');
  const plain = 'http://example.com/a@b.mp4 and user@example.com and /v/a.mp4?x=1';
  t.equal(maskCredentials(plain), plain, 'an @ in a path or a mail address is left alone');
  const when = new Date(0);
  const cyclic: Record<string, unknown> = { url: `rtmp://a:${PASSWORD}@h/x`, list: [`?pass=${PASSWORD}`, 3], when };
  cyclic.self = cyclic;
  const masked = maskDeep(cyclic);
  t.same([masked.url, masked.list, masked.when], ['rtmp://***@h/x', ['?pass=***', 3], when], 'maskDeep: strings in objects and arrays');
  t.equal(masked.self, masked, 'a cycle stays a cycle');
  t.equal(cyclic.url, `rtmp://a:${PASSWORD}@h/x`, 'the argument is untouched');
});

t.test('no credential in the log or the events of a skipped item or a failed input', async (t) => {
  const [min, max] = await portRange(4);
  const app = await startApp(t, {
    config: { playout: { enable: true, min_port: min, max_port: max }, log: { level: 'debug', max_lines: 5000 } },
  });
  const events = app.service.app.kernel.services.resolve(eventsRef) as EventsService;
  const seen: CoreEvent[] = [];
  const sub = events.subscribe({}, undefined, (e) => seen.push(e));
  t.teardown(() => sub.close());
  const v = join(app.dir, 'disk', 'v');
  await makeClip(v, 'a.mp4', 1);
  await makeClip(v, 'b.mp4', 1);
  const list = '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nb.mp4\n#EXT-X-ENDLIST\n';
  t.equal((await app.request('PUT', '/api/v3/fs/disk/v/list.m3u8', { raw: list })).status, 201);

  const secretUrl = `http://admin:${PASSWORD}@127.0.0.1:9/x.mp4?token=${TOKEN}`;
  const items = [{ source: '/v/a.mp4' }, { source: secretUrl }, { source: '/v/list.m3u8' }];
  const put = await app.request('PUT', '/api/v3/playlist/chan', { body: { items, format: { width: 320, height: 240, fps: 25, video_bitrate_kbit: 300, audio_bitrate_kbit: 64 } } });
  t.equal(put.status, 200, 'stored (the API keeps the item as given)');
  // rewritten after its insert (through the API) to name a file outside the disk root
  t.equal((await app.request('PUT', '/api/v3/fs/disk/v/list.m3u8', { raw: list.replace('b.mp4', '/etc/hostname') })).status, 204);

  const proc = {
    id: 'ch', autostart: true, reconnect: false,
    input: [{ id: 'in', address: 'playlist:chan', options: [] }], output: [{ id: 'o', address: '-', options: ['-f', 'null'] }],
  };
  t.equal((await app.request('POST', '/api/v3/process', { body: proc })).status, 200);
  const bad = {
    id: 'bad', autostart: true, reconnect: false,
    input: [{ id: 'in', address: `srt://127.0.0.1:9?mode=caller&passphrase=P4ssphrase7&streamid=live/x,token:${TOKEN}`, options: [] }],
    output: [{ id: 'o', address: '-', options: ['-f', 'null'] }],
  };
  t.equal((await app.request('POST', '/api/v3/process', { body: bad })).status, 200);
  t.equal((await app.request('POST', '/api/v3/process', { body: { ...bad, id: 'bad2', input: [{ id: 'in', address: secretUrl, options: [] }] } })).status, 200);

  const skipped = (item: string) => seen.find((e) => e.type === 'playlist.item.skipped' && String(e.payload.item).includes(item));
  await waitFor(() => skipped('127.0.0.1:9/x.mp4') && skipped('/v/list.m3u8'), { what: 'both items skipped', timeout: 60_000 });
  t.match(skipped('/v/list.m3u8')!.payload.reason, /\/etc\/hostname: outside the disk filesystem/, 'the rewritten playlist is refused at its start');
  const url = skipped('127.0.0.1:9/x.mp4')!;
  t.equal(url.payload.item, 'http://***@127.0.0.1:9/x.mp4?token=***', 'the event names the item masked');
  for (const id of ['bad', 'bad2']) {
    await waitFor(() => seen.some((e) => e.type === 'process.state' && e.subject.process === id && e.payload.to === 'failed'), { what: `${id} failed`, timeout: 30_000 });
  }
  const lines = seen.filter((e) => e.type === 'process.state' && String(e.subject.process).startsWith('bad')).map((e) => String(e.payload.last_logline));
  t.ok(lines.some((l) => l.includes('***')), `the failures' last lines are in the events, masked: ${lines.join(' | ')}`);

  const log = JSON.stringify((await app.request('GET', '/api/v3/log?format=raw')).body);
  t.match(log, /playlist item skipped: http:\/\/\*\*\*@127\.0\.0\.1:9\/x\.mp4\?token=\*\*\*/, 'the skip is logged, masked');
  const text = `${log}\n${JSON.stringify(seen)}`;
  for (const s of SECRETS) t.notOk(text.includes(s), `no ${s} in the log or the events`);
  t.notOk(text.includes('admin:'), 'no user:password');
  const st = (await app.request('GET', '/api/v3/process/ch/state')).body;
  t.ok(st.playlist.in.skipped >= 2, 'the state counts the skips');
});
