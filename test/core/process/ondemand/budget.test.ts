import t, { type Test } from 'tap';
import { get } from 'node:http';
import { startApp, type TestApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../../plugins/rtmp/ref.ts';
import { state, waitState } from '../helpers.ts';
import { hlsProcess, ownFfmpegs, readFrames, rtmpProcess } from './helpers.ts';

/*
 * What a stranger may start (issue 43, point 5): on-demand starts have a budget per client address
 * (`encoder.ondemand.max_starts_per_client` within `client_window_seconds`) and a total at once
 * (`max_running`). A request over it that would start a waiting process gets 429 with Retry-After
 * and nothing starts; a reader of a process that runs costs nothing. Real ffmpeg, real service;
 * the second client is the loopback source address 127.0.0.2.
 */

const WAITING = '## on demand: waiting';
const SECOND = '127.0.0.2';

interface Answer { status: number; retryAfter: string | undefined; text: string }

/** A GET of the service from source address `from` (the door sees it as the client). */
function getFrom(app: TestApp, path: string, from = '127.0.0.1'): Promise<Answer> {
  const u = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port: Number(u.port), path, localAddress: from, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], text }));
    });
    req.on('error', reject);
  });
}

async function addWaiting(app: TestApp, names: string[], body: (n: string) => Record<string, unknown> = (n) => hlsProcess(n, n)): Promise<void> {
  for (const n of names) {
    const r = await app.request('POST', '/api/v3/process', { body: body(n) });
    if (r.status !== 200) throw new Error(`POST ${n}: ${r.status} ${r.text}`);
  }
  for (const n of names) await waitState(app, n, (s) => s.ondemand?.waiting === true, 'waiting');
}

/** Waits until the waiting playlists are up, read through the API (no demand), so a viewer's GET finds one. */
async function waitPlaylists(app: TestApp, names: string[]): Promise<void> {
  for (const n of names) {
    await waitFor(async () => {
      const r = await app.request('GET', `/api/v3/fs/mem/${n}.m3u8`);
      return r.status === 200 && r.text.includes(WAITING);
    }, { what: `the waiting playlist of ${n}`, timeout: 20_000 });
  }
}

const started = (s: { ondemand?: { waiting: boolean }; exec: string }) => s.ondemand?.waiting === false && ['starting', 'running'].includes(s.exec);

function refused(t: Test, a: Answer, detail: RegExp, what: string): void {
  t.equal(a.status, 429, `${what}: 429`);
  t.ok(Number(a.retryAfter) >= 1, `${what}: Retry-After ${a.retryAfter}`);
  const body = JSON.parse(a.text) as { code: number; message: string; details: string[] };
  t.match(body, { code: 429, message: 'Too Many Requests' }, `${what}: the Error body`);
  t.match(body.details[0], detail, `${what}: says why`);
}

t.test('one client starts at most its budget; over it a request gets 429 and nothing starts; a running process costs nothing', async (t) => {
  const app = await startApp(t, { config: { encoder: { ondemand: { max_starts_per_client: 2, max_running: 0 } } } });
  const names = ['bpc1', 'bpc2', 'bpc3', 'bpc4'];
  await addWaiting(app, names);
  await waitPlaylists(app, names);
  const answers: Answer[] = [];
  for (const n of names) answers.push(await getFrom(app, `/memfs/${n}.m3u8`));
  t.same(answers.map((a) => a.status), [200, 200, 429, 429], 'the first two are answered (the waiting playlist), the others refused');
  t.ok(answers[0]!.text.includes(WAITING), 'an admitted viewer gets the waiting playlist');
  refused(t, answers[2]!, /from this address/, 'the third');
  t.ok(Number(answers[2]!.retryAfter) <= 60, 'Retry-After within the window');
  await waitState(app, 'bpc1', started, 'started');
  await waitState(app, 'bpc2', started, 'started');
  for (const n of ['bpc3', 'bpc4']) {
    const s = await state(app, n);
    t.match({ waiting: s.ondemand.waiting, exec: s.exec }, { waiting: true, exec: 'finished' }, `${n} still waits`);
    t.same(ownFfmpegs(`${n}.m3u8`), [], `no ffmpeg for ${n}`);
  }
  t.equal(ownFfmpegs('bpc1.m3u8').length, 1, 'one ffmpeg for a started one');
  // over its budget, the client still reads what runs: it costs nothing
  const again = await getFrom(app, '/memfs/bpc1.m3u8');
  t.equal(again.status, 200, 'a running process is served to a client over its budget');
  // another address has its own budget
  const other = await getFrom(app, '/memfs/bpc3.m3u8', SECOND);
  t.equal(other.status, 200, 'another address starts one');
  await waitState(app, 'bpc3', started, 'started by the second address');
  t.same(ownFfmpegs('bpc4.m3u8'), [], 'still nothing for the fourth');
});

t.test('the total at once holds across two client addresses, and frees once one stopped', async (t) => {
  const app = await startApp(t, { config: { encoder: { ondemand: { max_starts_per_client: 10, max_running: 2, idle_seconds: 2 } } } });
  const names = ['btot1', 'btot2', 'btot3'];
  await addWaiting(app, names, (n) => hlsProcess(n, n, { ondemand: { enable: true, idle_seconds: 2 } }));
  await waitPlaylists(app, names);
  t.equal((await getFrom(app, '/memfs/btot1.m3u8')).status, 200, 'the first address starts one');
  t.equal((await getFrom(app, '/memfs/btot2.m3u8', SECOND)).status, 200, 'the second address starts another');
  refused(t, await getFrom(app, '/memfs/btot3.m3u8', SECOND), /at once/, 'a third start from the second address');
  refused(t, await getFrom(app, '/memfs/btot3.m3u8'), /at once/, 'a third start from the first address');
  t.equal((await getFrom(app, '/memfs/btot1.m3u8', SECOND)).status, 200, 'a viewer of a running one is served');
  await waitState(app, 'btot1', started, 'started');
  await waitState(app, 'btot2', started, 'started');
  const s3 = await state(app, 'btot3');
  t.equal(s3.ondemand.waiting, true, 'the third still waits');
  t.same(ownFfmpegs('btot3.m3u8'), [], 'no ffmpeg for the third');
  // nobody asks any more: both stop after their idle time, and the third may start
  await waitState(app, 'btot1', (s) => s.ondemand?.waiting === true, 'waiting again', 20_000);
  await waitState(app, 'btot2', (s) => s.ondemand?.waiting === true, 'waiting again', 20_000);
  const ok = await waitFor(async () => {
    const a = await getFrom(app, '/memfs/btot3.m3u8');
    return a.status === 200 ? a : undefined;
  }, { what: 'the third answered', timeout: 10_000 });
  t.equal(ok.status, 200, 'the third is answered once the others stopped');
  await waitState(app, 'btot3', started, 'started at last');
});

t.test('an RTMP player over the budget is refused like a missing stream, and nothing starts', async (t) => {
  const app = await startApp(t, {
    config: { rtmp: { enable: true, address: '127.0.0.1:0' }, encoder: { ondemand: { max_starts_per_client: 1, max_running: 0 } } },
  });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  await addWaiting(app, ['brt1', 'brt2'], (n) => rtmpProcess(n, n));
  const url = (n: string) => `rtmp://127.0.0.1:${rtmp.ports().rtmp}/${n}`;
  t.ok(await readFrames(url('brt1'), 10) >= 10, 'the first player reads its stream');
  const second = await readFrames(url('brt2'), 10, 8000).then((n) => n, () => -1);
  t.ok(second <= 0, `the second player reads nothing (${second})`);
  const s = await state(app, 'brt2');
  t.match({ waiting: s.ondemand.waiting, exec: s.exec }, { waiting: true, exec: 'finished' }, 'the second still waits');
  t.same(ownFfmpegs('brt2'), [], 'no ffmpeg for it');
});

t.test('with serving threads the budget holds: main decides, and every thread answers 429 once told', async (t) => {
  const app = await startApp(t, { config: { http: { threads: 2 }, encoder: { ondemand: { max_starts_per_client: 2, max_running: 0 } } } });
  const names = ['bth1', 'bth2', 'bth3', 'bth4', 'bth5'];
  await addWaiting(app, names);
  await waitPlaylists(app, names);
  // all at once: whichever thread answers, main starts two
  const answers = await Promise.all(names.map((n) => getFrom(app, `/memfs/${n}.m3u8`)));
  t.ok(answers.every((a) => a.status === 200 || a.status === 429), `answered or refused (${answers.map((a) => a.status).join(' ')})`);
  await waitFor(async () => {
    const states = await Promise.all(names.map((n) => state(app, n)));
    return states.filter(started).length === 2;
  }, { what: 'two started' });
  // the hits of the others reached main after the budget was used up: they stay waiting
  await new Promise((res) => setTimeout(res, 1500));
  const states = await Promise.all(names.map((n) => state(app, n)));
  t.equal(states.filter(started).length, 2, 'two of five started');
  const waiting = names.filter((_, i) => states[i].ondemand.waiting === true);
  t.equal(waiting.length, 3, 'three still wait');
  for (const n of waiting) t.same(ownFfmpegs(`${n}.m3u8`), [], `no ffmpeg for ${n}`);
  // each thread heard main by now: a waiting one is refused, whoever answers
  for (let i = 0; i < 6; i++) t.equal((await getFrom(app, `/memfs/${waiting[i % 3]}.m3u8`)).status, 429, `refused (${i + 1})`);
});
