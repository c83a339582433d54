import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { active } from './helpers.ts';

// ffmpeg's HLS demuxer asks for every segment with `Range: bytes=0-`: a 206 is egress like a 200
t.test('segment reads answered with 206 (Range) count towards the hls session', async (t) => {
  const app = await startApp(t, { config: { sessions: { ip_ignorelist: [], session_timeout_sec: 10 }, storage: { memory: { auth: { enable: false } } } } });
  const put = (path: string, body: string | Buffer) => app.request('PUT', `/memfs/${path}`, { raw: Buffer.from(body) });
  const segment = Buffer.alloc(100_000, 7);
  t.equal((await put('r_0.ts', segment)).status, 201);
  t.equal((await put('r.m3u8', '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nr_0.ts\n')).status, 201);

  const master = await (await fetch(`${app.url}/memfs/r.m3u8`)).text();
  const media = `${app.url}/memfs/${master.trim().split('\n').at(-1)}`;
  const list = await (await fetch(media)).text();
  const seg = list.split('\n').find((l) => l.startsWith('r_0.ts'))!;
  t.match(seg, /session=/, 'the segment carries the session');
  const whole = await fetch(`${app.url}/memfs/${seg}`, { headers: { range: 'bytes=0-' } });
  t.equal(whole.status, 206);
  t.equal((await whole.arrayBuffer()).byteLength, segment.length);
  const first = await waitFor(async () => {
    const s = (await active(app))[0];
    return s && s.bytes_tx >= segment.length ? s : undefined;
  }, { what: 'the session, active with the 206 bytes counted', timeout: 10_000 });
  const part = await fetch(`${app.url}/memfs/${seg}`, { headers: { range: 'bytes=0-999' } });
  t.equal(part.status, 206);
  t.equal((await part.arrayBuffer()).byteLength, 1000);
  const after = await waitFor(async () => {
    const s = (await active(app)).find((x: any) => x.id === first.id);
    return s && s.bytes_tx >= first.bytes_tx + 1000 ? s : undefined;
  }, { what: 'a partial 206 counted too', timeout: 10_000 });
  t.ok(after.bytes_tx >= first.bytes_tx + 1000);
});
