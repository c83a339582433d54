import t, { type Test } from 'tap';
import { connect } from 'node:net';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { play, publish, type Ff } from '../../plugins/rtmp/helpers.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { streamTableRef, type StreamTable } from '../../../sdk/index.ts';
import { freeTcp } from '../../helpers/net-proc.ts';

/*
 * Issue 44.1: a config reload keeps every connection whose listener is unchanged (`ctx.keep`).
 * A settings save in restreamer-ui (PUT, then GET /api/v3/config/reload) dropped every RTMP
 * publisher and player: the reload closed the whole app, the RTMP server with it. Now the
 * listener and its sessions stay when `rtmp.address` (and the TLS ones) are unchanged, are
 * announced to the new app's hooks, and are checked again against the new settings.
 */


/** Whether a TCP connect to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); done(false); });
    s.once('error', () => done(true));
  });
}

const rtmpOf = (app: TestApp) => app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
const tableOf = (app: TestApp) => app.service.app.kernel.services.resolve(streamTableRef) as StreamTable;

/** PUTs `body` and reloads; resolves once the new app runs. */
async function reloadWith(t: Test, app: TestApp, body: Record<string, unknown>): Promise<void> {
  const before = app.service.app;
  const put = await app.request('PUT', '/api/v3/config', { body });
  t.equal(put.status, 200, `${JSON.stringify(body)} stored (${put.text.slice(0, 200)})`);
  t.equal((await app.request('GET', '/api/v3/config/reload')).text, '"OK"', 'and reloaded');
  await waitFor(() => app.service.app !== before && app.service.app.kernel.plugins.includes('rtmp'), { what: 'the reloaded app' });
}

async function rtmpSessions(app: TestApp): Promise<Array<{ local: string; remote: string }>> {
  const r = await app.request('GET', '/api/v3/session/active?collectors=rtmp');
  return r.status === 200 ? r.body.rtmp as Array<{ local: string; remote: string }> : [];
}

/** A publisher (no reconnect options: a dropped connection ends it) and a player of `live/cam`. */
async function live(t: Test, app: TestApp, token: string): Promise<{ pub: Ff; player: ReturnType<typeof play>; since: number; id: string }> {
  const url = `rtmp://127.0.0.1:${rtmpOf(app).ports().rtmp}/live/cam`;
  const pub = publish(t, `${url}?token=${token}`, { seconds: 90 });
  const got = await waitFor(() => tableOf(app).get('live/cam'), { what: `the publisher (${pub.stderr()})` });
  const player = play(t, `${url}?token=${token}`, { timeoutMs: 90_000 });
  await waitFor(() => player.frames().length >= 5, { what: `the player's frames (${player.stderr()})` });
  return { pub, player, since: got.since, id: got.publisher.id };
}

t.test('a reload that changes only name or log.max_lines keeps the RTMP publisher and player connected', async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0', token: 'tok1' }, sessions: { enable: true, ip_ignorelist: [] } } });
  const port = rtmpOf(app).ports().rtmp;
  const { pub, player, since, id } = await live(t, app, 'tok1');
  await waitFor(async () => (await rtmpSessions(app)).length === 2, { what: 'two RTMP sessions' });
  for (const body of [{ name: 'renamed' }, { log: { max_lines: 600 } }]) {
    const frames = player.frames().length;
    await reloadWith(t, app, body);
    t.equal(rtmpOf(app).ports().rtmp, port, 'the same RTMP port');
    const s = tableOf(app).get('live/cam');
    t.same([s?.since, s?.publisher.id], [since, id], 'the same publication: same start, same connection');
    t.same((await app.request('GET', '/api/v3/rtmp')).body, [{ name: '/live/cam' }], 'GET /api/v3/rtmp lists it');
    await waitFor(() => player.frames().length >= frames + 10, { what: `frames after the reload (${player.stderr()})` });
    t.pass('the player decodes on without interruption');
    t.same([pub.child.exitCode, player.child.exitCode], [null, null], 'the publisher and the player run on (no reconnect)');
    await waitFor(async () => (await rtmpSessions(app)).length === 2, { what: 'the sessions announced to the new app' });
    t.pass('GET /api/v3/session/active lists the publisher and the player again');
  }
});

t.test('a reload that changes rtmp.token ends the publisher and player of the old token; new ones use the new token', async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0', token: 'tok1' } } });
  const { pub, player } = await live(t, app, 'tok1');
  await reloadWith(t, app, { rtmp: { token: 'tok2' } });
  t.not(await pub.done, null, 'the publisher of the old token is cut (its ffmpeg ends)');
  await player.done;
  t.pass('so is its player');
  await waitFor(() => !tableOf(app).get('live/cam'), { what: 'the stream gone' });
  const again = await live(t, app, 'tok2');
  t.equal(again.pub.child.exitCode, null, 'the new token publishes');
});

t.test('a reload that changes rtmp.address moves the listener: the old port is closed, the new one bound', async (t) => {
  const [a, b] = [await freeTcp(), await freeTcp()];
  const app = await startApp(t, { config: { rtmp: { enable: true, address: `127.0.0.1:${a}` } } });
  const pub = publish(t, `rtmp://127.0.0.1:${a}/live/cam`, { seconds: 90 });
  await waitFor(() => tableOf(app).get('live/cam'), { what: `the publisher (${pub.stderr()})` });
  await reloadWith(t, app, { rtmp: { address: `127.0.0.1:${b}` } });
  t.equal(rtmpOf(app).ports().rtmp, b, 'the new port');
  t.ok(await refused(a), 'the old port is closed');
  t.not(await pub.done, null, 'its publisher was cut');
  const again = publish(t, `rtmp://127.0.0.1:${b}/live/cam`, { seconds: 90 });
  await waitFor(() => tableOf(app).get('live/cam'), { what: `a publisher on the new port (${again.stderr()})` });
  t.pass('the new port takes publishers');
});

t.test('service.close after a kept reload ends every connection and fires the end hooks', async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0' } } });
  const { pub, player, since } = await live(t, app, '');
  await reloadWith(t, app, { name: 'renamed' });
  t.equal(tableOf(app).get('live/cam')?.since, since, 'the publication is kept');
  t.equal(pub.child.exitCode, null, 'its publisher runs on');
  const ring = app.service.app.kernel.ring;
  await app.service.close();
  await Promise.all([pub.done, player.done]);
  t.pass('the publisher and the player are cut at close');
  const lines = ring.lines().join('\n');
  t.match(lines, /rtmp publish ended/, 'the publish ended (its end hooks fired)');
  t.match(lines, /rtmp play ended/, 'the play too');
  t.same(app.service.app.kernel.kept.keys(), [], 'nothing is kept any more');
});
