import t, { type Test } from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, play } from '../rtmp/helpers.ts';
import { placeholdersRef, streamTableRef, type StreamTable } from '../../../sdk/index.ts';
import { PASS, SOURCE, srtUrl } from './srt-helpers.ts';

/*
 * Issue 44.1: a reload that leaves the SRT settings as they are keeps the SRT host process and
 * every connection (`ctx.keep`): a settings save in restreamer-ui no longer cuts an OBS publishing
 * over SRT. A changed token (a setting the host takes at its start) starts a new host: the old
 * token's publisher is cut.
 */

/** Pids of this process's descendants running the SRT host program. */
function hostPids(): number[] {
  const parent = new Map<number, number>();
  const hosts: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('srt-host')) hosts.push(Number(d));
    } catch { /* gone meanwhile */ }
  }
  const under = (pid: number) => { for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true; return false; };
  return hosts.filter(under);
}

const tableOf = (app: TestApp) => app.service.app.kernel.services.resolve(streamTableRef) as StreamTable;
const srtPort = (app: TestApp) => {
  const ph = app.service.app.kernel.services.resolve(placeholdersRef) as { get(n: string): { value(s: string): string } };
  return Number(/:(\d+)\?/.exec(ph.get('srt').value('input'))![1]);
};

async function reloadWith(t: Test, app: TestApp, body: Record<string, unknown>): Promise<void> {
  const before = app.service.app;
  const put = await app.request('PUT', '/api/v3/config', { body });
  t.equal(put.status, 200, `${JSON.stringify(body)} stored (${put.text.slice(0, 200)})`);
  t.equal((await app.request('GET', '/api/v3/config/reload')).text, '"OK"', 'and reloaded');
  await waitFor(() => app.service.app !== before && app.service.app.kernel.plugins.includes('srt'), { what: 'the reloaded app' });
}

async function srtSessions(app: TestApp): Promise<unknown[]> {
  const r = await app.request('GET', '/api/v3/session/active?collectors=srt');
  return r.status === 200 ? r.body.srt as unknown[] : [];
}

async function live(t: Test, app: TestApp, token: string) {
  const port = srtPort(app);
  const pub = ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '90', '-f', 'mpegts', srtUrl(port, `live/cam,mode:publish,token:${token}`)], 120_000);
  const got = await waitFor(() => tableOf(app).get('live/cam'), { timeout: 30_000, what: `the SRT publisher (${pub.stderr()})` });
  const player = play(t, srtUrl(port, `live/cam,token:${token}`), { timeoutMs: 120_000 });
  await waitFor(() => player.frames().length >= 5, { timeout: 30_000, what: `the player's frames (${player.stderr()})` });
  return { pub, player, since: got.since, id: got.publisher.id };
}

t.test('a reload that changes only name or log.max_lines keeps the SRT host, its publisher and its player', async (t) => {
  const app = await startApp(t, { config: { srt: { enable: true, address: '127.0.0.1:0', token: 'tok1', passphrase: PASS }, sessions: { enable: true, ip_ignorelist: [] } } });
  const port = srtPort(app);
  const { pub, player, since, id } = await live(t, app, 'tok1');
  const hosts = hostPids();
  t.equal(hosts.length, 1, 'one SRT host process');
  await waitFor(async () => (await srtSessions(app)).length === 2, { what: 'two SRT sessions' });
  for (const body of [{ name: 'renamed' }, { log: { max_lines: 600 } }]) {
    const frames = player.frames().length;
    await reloadWith(t, app, body);
    t.same(hostPids(), hosts, 'the same host process');
    t.equal(srtPort(app), port, 'on the same port');
    const s = tableOf(app).get('live/cam');
    t.same([s?.since, s?.publisher.id], [since, id], 'the same publication: same start, same connection');
    const listed = await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher?.['live/cam'], { what: 'GET /api/v3/srt lists it' });
    t.ok(listed, 'GET /api/v3/srt lists it');
    await waitFor(() => player.frames().length >= frames + 10, { timeout: 30_000, what: `frames after the reload (${player.stderr()})` });
    t.pass('the player decodes on without interruption');
    t.same([pub.child.exitCode, player.child.exitCode], [null, null], 'the publisher and the player run on (no reconnect)');
    await waitFor(async () => (await srtSessions(app)).length === 2, { what: 'the sessions announced to the new app' });
    t.pass('GET /api/v3/session/active lists the publisher and the player again');
  }
});

t.test('a reload that changes srt.token starts a new host: the old token\'s publisher is cut; close leaves no host', async (t) => {
  const app = await startApp(t, { config: { srt: { enable: true, address: '127.0.0.1:0', token: 'tok1', passphrase: PASS } } });
  const { pub } = await live(t, app, 'tok1');
  const hosts = hostPids();
  await reloadWith(t, app, { srt: { token: 'tok2' } });
  await pub.done;
  t.pass('the publisher of the old token is cut');
  t.not(hostPids()[0], hosts[0], 'a new host process');
  t.equal(hostPids().length, 1, 'only one');
  const again = await live(t, app, 'tok2');
  t.equal(again.pub.child.exitCode, null, 'the new token publishes');
  await app.service.close();
  await again.pub.done;
  t.same(hostPids(), [], 'service.close leaves no SRT host');
});
