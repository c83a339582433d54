import t, { type Test } from 'tap';
import { streamTableRef, type StreamTable } from '../../../sdk/index.ts';
import type { TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { ffmpeg as rtmpFfmpeg, publish } from '../../plugins/rtmp/helpers.ts';
import { ffmpeg, srtUrl, startSrtApp } from '../../plugins/srt/srt-helpers.ts';

/*
 * Issue 44.3: when a publisher leaves, its readers end, on every protocol, as in the reference.
 * A publisher killed (no goodbye: an RTMP socket closes, an SRT caller just goes silent) ends its
 * stream, and the RTMP and SRT readers' connections end with it, within a few seconds (a quiet SRT
 * publisher is probed after 1 s and closed when it does not answer; before, libsrt's 10 s peer
 * idle timeout). A quiet publisher that answers stays: plugins/srt bounds.test.ts.
 */

/** Well under the 10 s idle timeout the SRT readers used to wait for, well over the 2 s it takes. */
const DEADLINE_MS = 7000;

async function startBoth(t: TestLike) {
  const app = await startSrtApp(t, { token: '', passphrase: '' }, { rtmp: { enable: true, address: '127.0.0.1:0' } });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  return Object.assign(app, { rtmpBase: `rtmp://127.0.0.1:${rtmp.ports().rtmp}` });
}

type App = Awaited<ReturnType<typeof startBoth>>;

/** An RTMP and an SRT reader of `name`, both attached (listed) before it returns; `ended()` says which ended. */
async function readers(t: TestLike, app: App, name: string) {
  const srt = ffmpeg(t, ['-i', srtUrl(app.srtPort, name, ''), '-c', 'copy', '-f', 'null', '-'], 90_000);
  const rtmp = rtmpFfmpeg(t, ['-loglevel', 'warning', '-i', `${app.rtmpBase}/${name}`, '-c', 'copy', '-f', 'null', '-'], 90_000);
  let srtEnded = false;
  let rtmpEnded = false;
  void srt.done.then(() => { srtEnded = true; });
  void rtmp.done.then(() => { rtmpEnded = true; });
  const table = app.service.app.kernel.services.resolve(streamTableRef) as StreamTable;
  await waitFor(() => table.get(name)?.readers.length === 2, { timeout: 30_000, what: 'both readers attached' });
  return { ended: () => ({ srt: srtEnded, rtmp: rtmpEnded }) };
}

async function bothEnd(t: Test, r: Awaited<ReturnType<typeof readers>>, what: string): Promise<void> {
  const since = Date.now();
  await waitFor(() => r.ended().srt && r.ended().rtmp, { timeout: DEADLINE_MS, interval: 100, what: `both readers ended (${what}): ${JSON.stringify(r.ended())}` })
    .catch((err: Error) => t.fail(err.message));
  t.same(r.ended(), { srt: true, rtmp: true }, `the SRT and the RTMP reader ended with the publisher (${what}, after ${Date.now() - since} ms)`);
}

t.test('an SRT publisher killed: its SRT and RTMP readers end within seconds', async (t) => {
  const app = await startBoth(t);
  const pub = ffmpeg(t, ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-re', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '32k',
    '-f', 'mpegts', srtUrl(app.srtPort, 'live/gone,mode:publish', '')], 90_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body?.publisher?.['live/gone'] !== undefined, { timeout: 30_000, what: 'the SRT publisher listed' });
  const r = await readers(t, app, 'live/gone');
  pub.kill();
  await bothEnd(t, r, 'SRT publisher killed');
  const log = (await app.request('GET', '/api/v3/log?format=raw')).body as Array<{ message: string; why?: string; stream?: string }>;
  t.ok(log.some((l) => l.message === 'SRT publisher closed' && l.stream === 'live/gone' && /no answer: the publisher is gone/.test(l.why ?? '')),
    'the vanished publisher did not answer the liveness probe');
});

t.test('an RTMP publisher killed: its SRT and RTMP readers end at once', async (t) => {
  const app = await startBoth(t);
  const pub = publish(t, `${app.rtmpBase}/live/left`, { seconds: 60 });
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { timeout: 30_000, what: 'the RTMP publisher listed' });
  const r = await readers(t, app, 'live/left');
  pub.child.kill('SIGKILL');
  await bothEnd(t, r, 'RTMP publisher killed');
});
