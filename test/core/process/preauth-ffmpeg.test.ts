import t from 'tap';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * Issue 46.1 with real ffmpeg run by the service: an HLS output into memfs (behind
 * `storage.memory.auth`) and restreamer-ui's tee each upload with one request (the run's credential
 * sent first, in the muxer's `headers`), so the service answers no 401 challenge to them; an output
 * with the operator's own `-headers` is left alone and is still asked twice (what every upload cost
 * before). Answers are counted at the service's own HTTP server.
 */

const SOURCE = { id: 'in', address: 'testsrc2=rate=25:size=64x36', options: ['-re', '-f', 'lavfi'] };
const ENCODE = ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p'];
const HLS = (id: string) => ['-f', 'hls', '-hls_time', '1', '-hls_list_size', '3', '-hls_flags', 'delete_segments', '-method', 'PUT'];

function processOf(id: string, output: { address: string; options: string[] }) {
  return { id, reference: id, type: 'ffmpeg', autostart: true, reconnect: false, options: ['-y'], input: [SOURCE], output: [{ id: 'out', ...output }] };
}

/** The service's answers to the uploads (PUT, DELETE) below /memfs/<id>: statuses per process id. */
function countAnswers(t: Parameters<typeof startApp>[0], app: TestApp): Map<string, number[]> {
  const seen = new Map<string, number[]>();
  const server = app.service.app.http.server;
  const on = (req: IncomingMessage, res: ServerResponse) => {
    const m = /^\/memfs\/([a-z]+)[._\d]/.exec(req.url ?? '');
    if (m && req.method !== 'GET' && req.method !== 'HEAD') res.once('finish', () => seen.set(m[1]!, [...(seen.get(m[1]!) ?? []), res.statusCode]));
  };
  server.prependListener('request', on);
  server.prependListener('checkContinue', on);
  t.teardown(() => { server.off('request', on); server.off('checkContinue', on); });
  return seen;
}

t.test('HLS into memfs: one request per upload, no 401; an own -headers still takes the challenge', async (t) => {
  const app = await startApp(t, { config: { storage: { memory: { auth: { enable: true, username: 'mem', password: 'secret-pass' } } } } });
  const seen = countAnswers(t, app);
  const tee = '[f=hls:hls_time=1:hls_list_size=3:hls_flags=append_list+delete_segments:hls_segment_filename={memfs^:}/tee_%04d.ts:method=PUT]{memfs}/tee.m3u8|[f=null]-';
  const defs = [
    processOf('plain', { address: '{memfs}/plain.m3u8', options: [...ENCODE, ...HLS('plain')] }),
    processOf('tee', { address: tee, options: ['-map', '0:v', ...ENCODE, '-flags', '+global_header', '-f', 'tee'] }),
    processOf('own', { address: '{memfs}/own.m3u8', options: [...ENCODE, ...HLS('own'), '-headers', 'X-Own: yes\r\n'] }),
  ];
  for (const body of defs) {
    const r = await app.request('POST', '/api/v3/process', { body });
    t.equal(r.status, 200, r.text.slice(0, 300));
  }
  const stored = (id: string) => (seen.get(id) ?? []).filter((s) => s >= 200 && s < 300).length;
  const challenged = (id: string) => (seen.get(id) ?? []).filter((s) => s === 401).length;
  const deleted = (id: string) => (seen.get(id) ?? []).includes(200);
  await waitFor(() => (['plain', 'tee', 'own'].every((id) => stored(id) >= 6) && deleted('plain') && deleted('tee')) || undefined,
    { what: 'six uploads stored by each, and old segments deleted', timeout: 40_000 }).catch((err: Error) => {
    throw new Error(`${err.message} (${[...seen].map(([k, v]) => `${k}: ${v.join(' ')}`).join('; ')})`);
  });
  t.pass(`uploads: ${[...seen].map(([k, v]) => `${k}: ${v.join(' ')}`).join('; ')}`);
  t.equal(challenged('plain'), 0, 'the HLS output is never challenged');
  t.equal(challenged('tee'), 0, 'nor the tee\'s HLS slave');
  t.ok(challenged('own') >= stored('own') - 1, `the operator's own -headers: every upload challenged first (${challenged('own')} of ${stored('own')})`);
  const state = await app.request('GET', '/api/v3/process/plain/state');
  const command: string[] = state.body.command;
  const at = command.indexOf('-headers');
  t.equal(command[at + 1], 'Authorization: Basic ***\r\n', 'the running command shows the header it runs with, its credential hidden');
  for (const id of ['plain', 'tee']) {
    const shown = JSON.stringify((await app.request('GET', `/api/v3/process/${id}/state`)).body.command);
    t.notOk(/Basic (?!\*\*\*)[A-Za-z0-9+/=]{8}/.test(shown) || /process:[^@\s]*:[A-Za-z0-9_-]{32}/.test(shown), `${id}: no run credential in the shown command (a caller could use it while the run lives)`);
  }
  t.equal(command[at + 2], command.at(-1), 'right before the address');
  t.match(command.at(-1), /^http:\/\/127\.0\.0\.1:\d+\/memfs\/plain\.m3u8$/, 'whose URL holds no credential (ffmpeg asks no 100-continue then)');
  for (const id of ['plain', 'tee']) {
    const report = await app.request('GET', `/api/v3/process/${id}/report`);
    const lines: string[] = (report.body.log ?? []).map((l: [string, string]) => l[1]);
    t.ok(lines.length > 0, `${id} has a log`);
    // (append_list first reads the playlist, not there yet: a 404 that is no upload's)
    const failed = lines.filter((l) => /error|failed|unauthori[sz]ed|forbidden/i.test(l) && !/HTTP error 404 Not Found/.test(l));
    t.same(failed, [], `${id}'s ffmpeg reports no failed upload`);
  }
  // a reader of the playlist: ffmpeg names its input with the URL it opened (the run's userinfo in it)
  const reader = { id: 'reader', reference: 'reader', autostart: true, reconnect: false, options: ['-y'],
    input: [{ id: 'in', address: '{memfs}/plain.m3u8', options: [] }], output: [{ id: 'out', address: '-', options: ['-c', 'copy', '-f', 'null'] }] };
  t.equal((await app.request('POST', '/api/v3/process', { body: reader })).status, 200);
  const named = await waitFor(async () => {
    const r = await app.request('GET', '/api/v3/process/reader/report');
    const lines: string[] = [...(r.body.log ?? []), ...(r.body.history ?? []).flatMap((h: { log: unknown[] }) => h.log)].map((l: [string, string]) => l[1]);
    return lines.find((l) => l.includes('/memfs/plain.m3u8'));
  }, { what: 'the reader\'s log naming its input', timeout: 20_000 });
  t.match(named, /process:reader:\*\*\*@/, `its log line hides the run's token (${named})`);
  const config = await app.request('GET', '/api/v3/process/plain/config');
  t.notOk(JSON.stringify(config.body).includes('Authorization'), 'the stored definition is what the operator wrote');
  for (const id of ['plain', 'tee', 'own', 'reader']) await app.request('DELETE', `/api/v3/process/${id}`);
});
