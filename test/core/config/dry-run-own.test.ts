import '../../../app/install.ts'; // this service's built-ins, installed into the core
import t, { type Test } from 'tap';
import { createSocket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { makeChain } from '../../helpers/certs.ts';
import { uiLoad, uiSave } from '../../helpers/restreamer-ui.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, publish } from '../../plugins/rtmp/helpers.ts';
import { streamTableRef, type StreamTable } from '../../../sdk/index.ts';
import { applyErrors } from '../../../core/config/apply-checks.ts';
import { heldPorts } from '../../../core/config/held-ports.ts';
import { withDefaults } from '../../../core/config/load.ts';
import { freeTcp } from '../../helpers/net-proc.ts';

/*
 * Issue 44.1: checking a new config (PUT /api/v3/config, and the reload's own check) never binds a
 * port the running service holds. With SRT on, every PUT answered 400 "srt.address: ... the port is
 * in use by another program": the SRT host is a child process, so its UDP port was not among this
 * process's sockets, and the dry run tried to bind it. A listener whose settings did not change is
 * not tried at all; one that moves to a host on its own port tries only the host.
 */


async function freeUdp(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const PASS = 'dry-run-passphrase';

/**
 * Every built-in plugin on ("*"), the listeners on fixed ports, written as restreamer-ui writes them
 * (`:port`, every interface; its Settings page turns an address into its port and back).
 */
async function everything(t: Test, tls: boolean): Promise<TestApp & { ports: { rtmp: number; rtmps: number; srt: number; https: number } }> {
  const ports = { rtmp: await freeTcp(), rtmps: await freeTcp(), srt: await freeUdp(), https: await freeTcp() };
  const app = await startApp(t, {
    config: {
      plugins: ['*'], address: ':0',
      rtmp: { enable: true, address: `:${ports.rtmp}` },
      srt: { enable: true, address: `:${ports.srt}`, passphrase: PASS },
      webrtc: { enable: true, bind_address: '127.0.0.1' },
      metrics: { enable: true }, sessions: { enable: true }, playout: { enable: true, min_port: 43000, max_port: 43100 },
      recordings: { enable: true },
    },
  });
  if (tls) {
    const chain = makeChain(app.dir);
    const on = await app.request('PUT', '/api/v3/config', {
      body: { tls: { enable: true, address: `:${ports.https}`, cert_file: chain.certFile, key_file: chain.keyFile }, rtmp: { enable_tls: true, address_tls: `:${ports.rtmps}` } },
    });
    t.equal(on.status, 200, `TLS stored (${on.text})`);
    t.equal((await app.request('GET', '/api/v3/config/reload')).text, '"OK"', 'and applied');
    await waitFor(() => app.service.httpsPort === ports.https, { what: 'the HTTPS listener' });
  }
  return Object.assign(app, { ports });
}

const PYTHON_BODY = {
  version: 3, api: { auth: { enable: true, username: 'admin', password: 'test' } },
  srt: { enable: true }, rtmp: { enable: true }, sessions: { ip_ignorelist: [] },
};

t.test('every plugin and listener on (HTTP, HTTPS, RTMP, RTMPS, SRT, WebRTC): PUTs that change no listener are stored', async (t) => {
  const app = await everything(t, true);
  for (const body of [{ name: 'renamed' }, { log: { max_lines: 500 } }, PYTHON_BODY]) {
    const r = await app.request('PUT', '/api/v3/config', { body });
    t.equal(r.status, 200, `${JSON.stringify(body)}: 200 (${r.text})`);
  }
  const stored = JSON.parse(await readFile(app.configPath, 'utf8'));
  t.same([stored.name, stored.log.max_lines, stored.api.auth.enable], ['renamed', 500, true], 'and stored');
  // the reload checks the same way, then binds every listener again on its port
  t.equal((await app.request('GET', '/api/v3/config/reload')).text, '"OK"', 'the reload is not refused');
  const login = await waitFor(async () => {
    const r = await app.request('POST', '/api/login', { body: { username: 'admin', password: 'test' } });
    return r.status === 200 ? r.body.access_token as string : undefined;
  }, { what: 'the reloaded service' });
  const cfg = (await app.request('GET', '/api/v3/config', { token: login })).body.config;
  t.equal(cfg.name, 'renamed', 'the reloaded service runs the stored config');
  t.equal(app.service.httpsPort, app.ports.https, 'HTTPS is on its port again');
  const again = await app.request('PUT', '/api/v3/config', { body: { name: 'after reload' }, token: login });
  t.equal(again.status, 200, `a PUT after the reload is stored too (${again.text})`);
});

t.test("restreamer-ui's Settings save (GET, change a field, PUT the whole object back) with every plugin on", async (t) => {
  const app = await everything(t, false);
  const shown = (await app.request('GET', '/api/v3/config')).body;
  t.ok(shown.config && shown.created_at, 'GET answers {config: {...}, ...}');
  const form = uiLoad(shown.config);
  form.name = 'from the settings page';
  const put = await app.request('PUT', '/api/v3/config', { body: uiSave(form) });
  t.equal(put.status, 200, `the page's save is stored (${put.text.slice(0, 300)})`);
  const after = (await app.request('GET', '/api/v3/config')).body.config;
  t.equal(after.name, 'from the settings page');
  t.equal(after.srt.address, `:${app.ports.srt}`, 'SRT on its port, every interface (the page writes :port)');
  // the page saves again: the addresses it wrote are those of the running listeners' ports
  t.equal((await app.request('PUT', '/api/v3/config', { body: uiSave(uiLoad(after)) })).status, 200, 'a second save too');
});

t.test('an RTMP and an SRT publisher stay connected across a config PUT that changes name', async (t) => {
  const app = await everything(t, false);
  const table = app.service.app.kernel.services.resolve(streamTableRef) as StreamTable;
  const rtmp = publish(t, `rtmp://127.0.0.1:${app.ports.rtmp}/live/rtmp-cam`, { seconds: 60 });
  const srt = ffmpeg(t, ['-loglevel', 'warning', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-t', '60',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p', '-f', 'mpegts',
    `srt://127.0.0.1:${app.ports.srt}?mode=caller&transtype=live&latency=400000&passphrase=${PASS}&streamid=live/srt-cam,mode:publish`]);
  const since = await waitFor(() => {
    const a = table.get('live/rtmp-cam');
    const b = table.get('live/srt-cam');
    return a && b ? [a.since, b.since] : undefined;
  }, { what: `both publishers (${rtmp.stderr()} ${srt.stderr()})` });
  const r = await app.request('PUT', '/api/v3/config', { body: { name: 'renamed while live' } });
  t.equal(r.status, 200, `stored (${r.text})`);
  // the same publications (same start), still fed: the readers' view would see them end otherwise
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.same([table.get('live/rtmp-cam')?.since, table.get('live/srt-cam')?.since], since, 'both publishers are the same connections still');
  t.equal(rtmp.child.exitCode, null, 'the RTMP publisher runs on');
  t.equal(srt.child.exitCode, null, 'the SRT publisher runs on');
});

t.test('a listener the running service has as it is is not tried again; a moved one is', async (t) => {
  // 192.0.2.1 (TEST-NET-1) is no address of this machine: trying it fails, so an answer without
  // an error shows the listener was not bound at all
  const dir = t.testdir({});
  const cfg = withDefaults({ address: '127.0.0.1:0', db: { dir }, storage: { disk: { dir } }, rtmp: { enable: true, address: '192.0.2.1:1935' }, srt: { enable: true, address: '192.0.2.1:6000' } });
  const held = await heldPorts(cfg, { http: 1 });
  t.same(await applyErrors(cfg, held, `${dir}/config.json`, { http: 1 }), {}, 'unchanged: nothing bound, nothing refused');
  const moved = withDefaults({ ...cfg, rtmp: { ...cfg.rtmp, address: '192.0.2.1:1937' } });
  t.same(Object.keys(await applyErrors(moved, held, `${dir}/config.json`, { http: 1 })), ['rtmp.address'], 'moved: tried, and refused');
  t.ok(held.udp.has(6000), 'the SRT port of the running config is held, whether or not this process has the socket');
});
