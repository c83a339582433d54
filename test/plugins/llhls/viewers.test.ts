import t from 'tap';
import { fileURLToPath } from 'node:url';
import { FULL_SWEEP_GAP_MS, Viewers } from '../../../plugins/llhls/viewers.ts';
import type { IngestPeer, StreamAudience, StreamResult, StreamTable } from '../../../sdk/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, startRtmpApp } from '../rtmp/helpers.ts';
import { playPolicyRef, type PlayPolicy } from './fixtures/play-policy.ts';

/*
 * A stream's access rules apply to its `/hls` viewers as to its other players (issue 47.2): the
 * first playlist request of a client runs the `prePlay` taps (a vendor's policy: the fixture
 * refuses streams named `private` and the token `expired`), a refusal is the documented status with an Error body
 * and starts nothing, an admitted viewer's reloads do not run the taps again.
 */
const policyPlugin = fileURLToPath(new URL('./fixtures/play-policy.ts', import.meta.url));
const LLHLS = { enable: true, target_duration_seconds: 1, part_target_ms: 200, idle_seconds: 60 };
const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast',
  '-tune', 'zerolatency', '-g', '25', '-pix_fmt', 'yuv420p'];

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

t.test('the prePlay taps admit /hls viewers once per viewing; a refusal is 403 and starts nothing', async (t) => {
  const app = await startRtmpApp(t, {}, { llhls: LLHLS, plugins: ['*', policyPlugin] });
  const policy = app.service.app.kernel.services.resolve(playPolicyRef) as PlayPolicy;
  const plays = () => policy.events.filter((e) => e.peer.protocol === 'hls');
  ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '30', '-f', 'flv', `${app.base}/live/cam`]);
  ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '30', '-f', 'flv', `${app.base}/live/private`]);
  await waitFor(() => app.rtmp.channels().length === 2 || undefined, { what: 'both publishers' });

  for (const file of ['index.m3u8', 'plain.m3u8', 'dvr.m3u8']) {
    const r = await get(`${app.url}/hls/live/private/${file}?x=1`);
    t.equal(r.status, 403, `${file}: refused by the tap`);
    t.match(JSON.parse(r.text), { code: 403, details: ['private stream'] }, 'with an Error body naming the reason');
  }
  t.equal(plays().length, 3, 'a refusal is not kept: each request asks again');
  const none = await get(`${app.url}/hls/live/private-too/index.m3u8`);
  t.equal(none.status, 403, 'a stream nothing publishes: the taps run before any on-demand start or 404');

  const base = `${app.url}/hls/live/cam/index.m3u8`;
  const first = await waitFor(async () => { const r = await get(`${base}?camera=3`); return r.status === 200 ? r : undefined; }, { what: 'the playlist' });
  t.match(first.text, /#EXTM3U/);
  const before = plays().length;
  for (let i = 0; i < 5; i++) t.equal((await get(`${base}?camera=3`)).status, 200, `reload ${i + 1}`);
  t.equal((await get(`${app.url}/hls/live/cam/plain.m3u8`)).status, 200);
  t.equal(plays().length, before, 'an admitted viewer reloads without the taps');
  const seen = plays().filter((e) => e.peer.stream === '/live/cam');
  t.equal(seen.length, 1, 'one prePlay for the viewer');
  t.match(seen[0], { hook: 'prePlay', peer: { protocol: 'hls', stream: '/live/cam', remote: '127.0.0.1:0', params: { camera: '3' } }, rx: 0 });
  t.notOk(plays().some((e) => e.hook !== 'prePlay'), 'no onPlay: the sessions plugin counts /hls by the door');
  t.equal((await get(`${base}?token=other`)).status, 200, 'another token is another viewer');
  t.equal(plays().filter((e) => e.peer.stream === '/live/cam').length, 2, 'whose taps run');
  const expired = await get(`${base}?token=expired`);
  t.equal(expired.status, 401, 'a tap\'s kind is the status (unauthorized: 401)');
  t.match(JSON.parse(expired.text), { code: 401, details: ['the token expired'] });
  t.match(JSON.stringify((await app.request('GET', '/api/v3/log')).body), /hls play refused: private stream/, 'a refusal is logged');
});

/** A stream table whose `admit` counts its calls and answers as told (only `admit` is used). */
function table(answer: (peer: IngestPeer) => StreamResult<StreamAudience>) {
  const calls: IngestPeer[] = [];
  const left: string[] = [];
  const streams = {
    admit: async (peer: IngestPeer) => {
      calls.push(peer);
      await new Promise((r) => setImmediate(r));
      const r = answer(peer);
      return r.ok ? { ok: true, handle: { announce() {}, leave: () => { left.push(peer.id); } } } : r;
    },
  } as unknown as StreamTable;
  return { streams, calls, left };
}

const ok = (): StreamResult<StreamAudience> => ({ ok: true, handle: { announce() {}, leave() {} } });
const log = { warn() {} };

t.test('concurrent first requests share one admission; kept viewers expire; the bound holds', async (t) => {
  let now = 1000;
  const { streams, calls, left } = table(ok);
  const v = new Viewers(streams, { keepMs: 100, max: 2, now: () => now, log });
  const q = new URLSearchParams('token=s3&_HLS_msn=4&a=b');
  await Promise.all([v.admit('s', '10.0.0.1', q), v.admit('s', '10.0.0.1', q), v.admit('s', '10.0.0.1', q)]);
  t.equal(calls.length, 1, 'one prePlay for three parallel requests');
  t.match(calls[0], { protocol: 'hls', stream: '/s', remote: '10.0.0.1:0', token: 's3' });
  t.same(calls[0]!.params, { a: 'b' }, 'the token and the player protocol keys are not parameters');
  await v.admit('s', '2001:db8::1', q);
  t.equal(calls.at(-1)!.remote, '[2001:db8::1]:0', 'IPv6 in brackets');
  t.equal(v.size, 2);
  await v.admit('s', '10.0.0.3', q);
  t.equal(v.size, 2, 'full: a third viewer is admitted but not kept');
  t.equal(left.length, 1, 'and let go at once');
  now += 50;
  await v.admit('s', '10.0.0.1', q);
  t.equal(calls.length, 3, 'a kept viewer asking again within keepMs runs no tap');
  now += 60;
  v.sweep();
  t.equal(v.size, 1, 'the viewer that did not ask went; the one that did stays');
  await v.admit('s', '2001:db8::1', q);
  t.equal(calls.length, 4, 'an expired viewer is admitted again');
  v.close();
  t.equal(v.size, 0);
});

t.test('a refusal answers its kind\'s status and is not kept', async (t) => {
  const { streams, calls } = table(() => ({ ok: false, code: 'STREAM_REFUSED', reason: 'no', kind: 'unauthorized' }) as StreamResult<StreamAudience>);
  const v = new Viewers(streams, { keepMs: 100, max: 10, log });
  for (let i = 0; i < 2; i++) {
    await t.rejects(v.admit('s', '10.0.0.1', new URLSearchParams()), { status: 401, errorCode: 'LLHLS_REFUSED' } as unknown as Error);
  }
  t.equal(calls.length, 2);
  t.equal(v.size, 0);
});

t.test('at the bound, new viewers sweep the kept ones at most once a second', async (t) => {
  let now = 1000;
  const { streams } = table(ok);
  const v = new Viewers(streams, { keepMs: 30_000, max: 50, now: () => now, log });
  for (let i = 0; i < 50; i++) await v.admit('s', `10.0.1.${i}`, new URLSearchParams());
  let sweeps = 0;
  const sweep = v.sweep.bind(v);
  v.sweep = () => { sweeps++; sweep(); };
  // a stranger's new tokens while every kept viewer is live: each is admitted, none kept
  for (let i = 0; i < 200; i++) await v.admit('s', '192.0.2.9', new URLSearchParams(`token=t${i}`));
  t.equal(v.size, 50);
  t.equal(sweeps, 1, 'one sweep for 200 new viewers within the same second');
  now += FULL_SWEEP_GAP_MS;
  await v.admit('s', '192.0.2.9', new URLSearchParams('token=later'));
  t.equal(sweeps, 2, 'the next after the gap');
  now += 30_001;
  await v.admit('s', '192.0.2.10', new URLSearchParams());
  t.equal(v.size, 1, 'the idle ones went at the next sweep; the newcomer is kept');
  v.close();
});
