import t from 'tap';
import { get } from 'node:http';
import { startApp, type TestApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { command, nullProcess, state, waitState } from '../helpers.ts';
import { hlsProcess, ownFfmpegs } from '../ondemand/helpers.ts';

/*
 * The resource budget on this machine as it is (real /proc, real ffmpeg, the real service): with
 * `resources.max_memory_usage` 0.01 % every machine is over it, so the start command gets 503, an
 * autostart waits and then ends failed, and a reader of an on-demand process gets 429; no ffmpeg runs.
 */

function getStatus(app: TestApp, path: string): Promise<{ status: number; retryAfter?: string; text: string }> {
  const u = new URL(app.url);
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port: Number(u.port), path, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], text }));
    }).on('error', reject);
  });
}

t.test('a limit of 0.01 % of the memory refuses and waits starts of real processes', async (t) => {
  const app = await startApp(t, { config: { resources: { max_memory_usage: 0.01, wait_seconds: 2 } } });
  const add = await app.request('POST', '/api/v3/process', { body: nullProcess('real-cmd') });
  t.equal(add.status, 200, add.text);
  const r = await app.request('PUT', '/api/v3/process/real-cmd/command', { body: { command: 'start' } });
  t.equal(r.status, 503, 'the start command: 503');
  t.match(r.body, { code: 503, message: 'Service Unavailable', details: [/resources\.max_memory_usage: memory [\d.]+ % \+ 0\.0 % > 0\.010 %/] });
  t.same(ownFfmpegs('real-cmd'), [], 'no ffmpeg');

  const auto = await app.request('POST', '/api/v3/process', { body: nullProcess('real-auto', { autostart: true, reconnect: false }) });
  t.equal(auto.status, 200, 'an autostart is saved');
  const w = await state(app, 'real-auto');
  t.same([w.order, w.exec], ['start', 'starting'], 'and waits');
  t.match(w.last_logline, /waiting up to 2 s for the resource budget/);
  const failed = await waitState(app, 'real-auto', (s) => s.exec === 'failed', 'failed once its wait ran out', 15_000);
  t.match(failed.last_logline, /over the resource budget/);
  t.same(ownFfmpegs('real-auto'), [], 'never spawned');
  t.equal(await command(app, 'real-auto', 'stop'), 200);
});

t.test('a reader of an on-demand process over the budget gets 429 and nothing starts', async (t) => {
  const app = await startApp(t, { config: { resources: { max_memory_usage: 0.01 } } });
  const add = await app.request('POST', '/api/v3/process', { body: hlsProcess('real-od', 'realod') });
  t.equal(add.status, 200, add.text);
  await waitState(app, 'real-od', (s) => s.ondemand?.waiting === true, 'waiting');
  const a = await waitFor(async () => {
    const x = await getStatus(app, '/memfs/realod.m3u8');
    return x.status === 429 ? x : undefined;
  }, { what: 'a 429 for the playlist', timeout: 15_000 });
  t.equal(a.retryAfter, '5', 'Retry-After');
  t.match(JSON.parse(a.text), { code: 429, message: 'Too Many Requests', details: [/over the resource budget/] });
  const s = await state(app, 'real-od');
  t.match({ waiting: s.ondemand.waiting, exec: s.exec }, { waiting: true, exec: 'finished' }, 'it still waits');
  t.same(ownFfmpegs('realod'), [], 'no ffmpeg');
});
