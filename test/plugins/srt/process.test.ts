import t from 'tap';
import { ingestHooksRef, type IngestPeer, type IngestTraffic } from '../../../sdk/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, state } from '../../core/process/helpers.ts';
import { srtCaller, startSrtApp, TOKEN, PASS } from './srt-helpers.ts';

t.test('{srt}: one process publishes through it, another pulls it into HLS in memfs', async (t) => {
  const app = await startSrtApp(t);
  await addProcess(app, {
    id: 'pub',
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: '{srt,name=cam,latency=200000}', options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-f', 'mpegts'] }],
  });
  const s = await waitFor(async () => {
    const st = await state(app, 'pub');
    return st.exec === 'running' && st.command.at(-1).includes('streamid') ? st : undefined;
  }, { what: 'publisher process running' });
  t.match(s.command.at(-1), new RegExp(`^srt://127\\.0\\.0\\.1:${app.srtPort}\\?mode=caller&transtype=live&latency=200000&streamid=cam,mode:publish,token:\\*\\*\\*&passphrase=[\\w-]{32}$`),
    'an output gets mode:publish, its run\'s token (shown as ***) and passphrase');
  t.notOk(s.command.at(-1).includes(TOKEN) || s.command.at(-1).includes(PASS), 'never srt.token or srt.passphrase');
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.cam !== undefined, { timeout: 30_000, what: 'cam published' });

  await addProcess(app, {
    id: 'hls',
    reconnect: true, reconnect_delay_seconds: 1,
    input: [{ id: 'in', address: '{srt,name=cam}', options: [] }],
    output: [{ id: 'out', address: '{memfs}/cam.m3u8', options: ['-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '3', '-method', 'PUT'] }],
  });
  const hls = await state(app, 'hls');
  t.match(hls.command.join(' '), /streamid=cam,mode:request,token:/, 'an input gets mode:request');
  t.match(hls.command.join(' '), /latency=20000&/, 'default latency 20000 µs');
  const playlist = await waitFor(async () => {
    const r = await app.request('GET', '/memfs/cam.m3u8');
    return r.status === 200 && /\.ts/.test(r.text) ? r.text : undefined;
  }, { timeout: 30_000, what: 'HLS playlist from the SRT stream' });
  t.match(playlist, /#EXTM3U/);
  const listed = (await app.request('GET', '/api/v3/srt')).body;
  t.equal(listed.subscriber.cam.length, 1, 'the HLS process is a subscriber');
});

t.test('the ingest hooks fire for SRT publishers and players, and may refuse them', async (t) => {
  const app = await startSrtApp(t, { token: '', passphrase: '' });
  const hooks = app.service.app.kernel.hooks.forTapper('test');
  const seen: string[] = [];
  const ends: Record<string, IngestTraffic> = {};
  hooks.tap(ingestHooksRef, 'prePublish', async (p: IngestPeer) => (p.stream === 'blocked' ? { reason: 'blocked here', kind: 'forbidden' } : undefined));
  hooks.tap(ingestHooksRef, 'prePlay', async (p: IngestPeer) => (p.params.u === 'nobody' ? { reason: 'who?' } : undefined));
  hooks.tap(ingestHooksRef, 'onPublish', (p: IngestPeer) => { seen.push(`publish ${p.stream} ${p.protocol} ${p.id}`); });
  hooks.tap(ingestHooksRef, 'onPlay', (p: IngestPeer) => { seen.push(`play ${p.stream}`); });
  hooks.tap(ingestHooksRef, 'onPublishEnd', (p: IngestPeer, tr: IngestTraffic) => { ends[`pub ${p.stream}`] = tr; });
  hooks.tap(ingestHooksRef, 'onPlayEnd', (p: IngestPeer, tr: IngestTraffic) => { ends[`play ${p.stream}`] = tr; });

  const blocked = srtCaller(app.srtPort, '#!::r=blocked,m=publish', '');
  t.teardown(() => blocked.stop());
  t.equal(await blocked.closed, 'broken', 'a prePublish veto closes the accepted socket');

  const pub = srtCaller(app.srtPort, '#!::r=ok,m=publish', '');
  t.teardown(() => pub.stop());
  await waitFor(() => seen.some((s) => s.startsWith('publish ok srt srt-')), { what: 'onPublish' });
  // media (MPEG-TS null packets), so the publisher outlives the first-media timeout while the players
  // below take their turns (each refusal takes seconds; it passed only while the sweep ran late)
  const packet = Buffer.alloc(188 * 7, 0xff);
  for (let i = 0; i < 7; i++) packet.set([0x47, 0x1f, 0xff, 0x10], i * 188);
  const feed = setInterval(() => pub.send(packet), 200);
  t.teardown(() => clearInterval(feed));
  const nobody = srtCaller(app.srtPort, '#!::r=ok,u=nobody', '');
  t.teardown(() => nobody.stop());
  t.equal(await nobody.closed, 'broken', 'a prePlay veto closes the player');
  const player = srtCaller(app.srtPort, 'ok', '');
  t.teardown(() => player.stop());
  await waitFor(() => seen.includes('play ok'), { what: 'onPlay' });
  t.notOk(seen.some((s) => s.includes('blocked')), 'a refused connection gets no on* hook');
  clearInterval(feed);
  pub.stop();
  await waitFor(() => ends['pub ok'] && ends['play ok'], { what: 'onPublishEnd and onPlayEnd' });
  t.same(Object.keys(ends[`pub ok`]!), ['rxBytes', 'txBytes']);
});
