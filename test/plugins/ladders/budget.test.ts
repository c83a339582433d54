import t from 'tap';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventsRef, type CoreEvent } from '../../../sdk/index.ts';
import { machineUsageRef, type MachineUsage } from '../../../core/process/resources/machine.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { createTestApp, override } from '../../../testkit/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpegPids, waitState } from '../../core/process/helpers.ts';
import { publish, record } from './helpers.ts';

/*
 * A ladder within the service's resource budget (issue 48.4, 48.3), real ffmpeg: while the machine
 * (played by the test: machineUsageRef overridden) is above `resources.max_cpu_usage`, a reader of a
 * rendition starts nothing and is refused as for a missing stream, with an event; under it the same
 * reader starts the ladder. A source that drops ends its renditions' readers as a publisher leaving does.
 */

const GIB = 1024 ** 3;
const ID = 'ladder:live_cam';

class PlayedMachine implements MachineUsage {
  cpu = 95;
  sample() {
    return { cpuPercent: this.cpu, memoryBytes: GIB, memoryTotalBytes: 8 * GIB };
  }
}

t.test('over the budget a rendition reader starts nothing; under it the ladder runs; the source dropping ends its readers', async (t) => {
  const machine = new PlayedMachine();
  const kit = await createTestApp({
    t, plugins: ['events', 'rtmp', 'ladders'], overrides: [override(machineUsageRef, machine)],
    config: {
      rtmp: { enable: true, address: '127.0.0.1:0' }, resources: { max_cpu_usage: 80, max_memory_usage: 0, wait_seconds: 0 },
      ladders: { enable: true, ladders: [{ id: 'cam', stream: 'live/cam', rungs: ['240p'], idle_seconds: 3 }] },
    },
  });
  await kit.listen(); // the engine's start and the ladders' processes come with the listener
  const events: CoreEvent[] = [];
  const sub = kit.services.get(eventsRef).subscribe({ types: ['process.*'] }, undefined, (e) => events.push(e));
  t.teardown(() => sub.close());
  const base = `rtmp://127.0.0.1:${(kit.services.get(rtmpServiceRef) as RtmpService).ports().rtmp}`;
  await waitState(kit, ID, (s) => s.ondemand?.waiting === true, 'the ladder waiting');
  const source = publish(t, `${base}/live/cam`);
  await waitFor(async () => (await kit.request('GET', '/api/v3/rtmp')).body.some?.((s: { name: string }) => s.name === '/live/cam'), { what: 'the source published' });

  const dir = await mkdtemp(join(tmpdir(), 'ladder-budget-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await t.rejects(record(`${base}/live/cam/240p`, join(dir, 'refused.flv'), 2), 'the reader is refused');
  t.same(ffmpegPids('split=').concat(ffmpegPids("scale=w=-2")), [], 'no ladder ffmpeg started');
  const st = (await kit.request('GET', `/api/v3/process/${ID}/state`)).body as { exec: string; ondemand: { waiting: boolean } };
  t.match(st, { exec: 'finished', ondemand: { waiting: true } }, 'the ladder still waits');
  const refused = await waitFor(async () => events.find((e) => e.type === 'process.budget.refuse'), { what: 'the refusal\'s event', timeout: 10_000 });
  t.match(refused.payload, { start: 'demand', reason: /max_cpu_usage/ }, `event process.budget.refuse (${JSON.stringify(refused.payload)})`);

  machine.cpu = 10;
  let settled = false;
  const reading = record(`${base}/live/cam/240p`, join(dir, 'read.flv'), 30).finally(() => { settled = true; });
  await waitState(kit, ID, (s) => s.exec === 'running', 'the ladder running under the budget');
  await waitFor(async () => (await kit.request('GET', '/api/v3/rtmp')).body.some?.((s: { name: string }) => s.name === '/live/cam/240p'), { what: 'the rendition published' });
  await new Promise((r) => setTimeout(r, 2000));
  t.notOk(settled, 'the rendition\'s reader is reading');
  const dropped = performance.now();
  await source.stop();
  await reading.catch(() => {}); // it ends with the stream, well before its 30 s
  const took = performance.now() - dropped;
  t.ok(took < 20_000, `the rendition's reader ended ${Math.round(took)} ms after the source dropped`);
  t.ok((await stat(join(dir, 'read.flv'))).size > 20_000, 'after it got the rendition');
  await waitFor(async () => !(await kit.request('GET', '/api/v3/rtmp')).body.some?.((s: { name: string }) => s.name === '/live/cam/240p'), { what: 'the rendition unlisted' });
});
