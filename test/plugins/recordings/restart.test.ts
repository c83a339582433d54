import t from 'tap';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, request, type TestLike } from '../../helpers/app.ts';
import { runCli, type Cli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { publish } from '../rtmp/helpers.ts';
import { probe } from './helpers.ts';
import { JOIN_MS } from '../../../plugins/recordings/segments.ts';

/*
 * The service as its own OS process: SIGTERM while a stream is recorded stores the open segment
 * and the index; a new process has the recording and its index, and records the next publish.
 */

async function start(t: TestLike, dir: string): Promise<Cli & { rtmp: string }> {
  const cli = await runCli(t, ['--config', join(dir, 'config.json')], cleanEnv(), dir);
  const line = await waitFor(async () => ((await request(cli.url, 'GET', '/api/v3/log')).body as string[]).find((l) => l.includes('rtmp server listening')), { what: 'the RTMP port' });
  return Object.assign(cli, { rtmp: `rtmp://127.0.0.1:${/"rtmp":(\d+)/.exec(line)![1]}` });
}

const get = async (url: string) => (await request(url, 'GET', '/api/v3/recordings/cam')).body;

t.test('a restart keeps the recording, its index and its files', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'rec-restart-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'disk'));
  await writeFile(join(dir, 'config.json'), JSON.stringify({
    address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, log: { level: 'info' },
    update_check: false, http: { threads: 0 }, rtmp: { enable: true, address: '127.0.0.1:0' }, recordings: { enable: true },
  }));
  const one = await start(t, dir);
  t.equal((await request(one.url, 'PUT', '/api/v3/recordings/cam', { body: { stream: 'live/cam', segment_seconds: 1 } })).status, 201, 'created');
  const pub = publish(t, `${one.rtmp}/live/cam`, { seconds: 30 });
  await waitFor(async () => (await get(one.url)).segments >= 3, { timeout: 30_000, what: 'three segments' });
  one.child.kill('SIGTERM');
  t.equal(await one.exited, 0, 'stopped cleanly');
  await pub.done;
  const before = JSON.parse(await readFile(join(dir, 'db', 'plugins', 'recordings', 'index-cam.json'), 'utf8')).segments as Array<{ file: string; start: number; duration: number }>;
  t.ok(before.length >= 4, `the index on disk holds the segments, the open one too (${before.length})`);

  const two = await start(t, dir);
  const rec = await get(two.url);
  t.equal(rec.stream, 'live/cam', 'the recording is back');
  t.equal(rec.segments, before.length, 'with its index');
  t.equal(rec.spans.length, 1, 'one span');
  const last = await readFile(join(dir, 'disk', before.at(-1)!.file));
  t.ok((await probe(last, 'mpegts')).firstKey, 'the segment stored at shutdown is whole and starts at a keyframe');
  const res = await fetch(`${two.url}/api/v3/recordings/cam/get?start=${before[0]!.start}&duration=2&format=ts`);
  t.equal(res.status, 200, 'a cut after the restart');

  // the first span's end is stamped from its media clock, which may run ahead of the wall clock by the
  // publisher's start-up lag: the next publish starts once the join window after that end has passed
  const lastEnd = before.at(-1)!.start + before.at(-1)!.duration;
  await waitFor(() => Date.now() > lastEnd + JOIN_MS + 200, { timeout: 30_000, what: 'the join window to pass' });
  const again = publish(t, `${two.rtmp}/live/cam`, { seconds: 3 });
  t.equal(await again.done, 0, 'published again');
  let seen: unknown;
  await waitFor(async () => { const r = seen = await get(two.url); return !r.recording && r.storing === 0 && r.spans.length === 2; }, { what: 'a second span' })
    .catch(async (err: Error) => {
      const log = ((await request(two.url, 'GET', '/api/v3/log')).body as string[]).slice(-40);
      throw new Error(`${err.message}; last view ${JSON.stringify(seen)}; end of the first span ${lastEnd}; log:\n${log.join('\n')}`);
    });
  t.pass('the next publish is recorded');
  two.child.kill('SIGTERM');
  t.equal(await two.exited, 0, 'stopped cleanly again');
});
