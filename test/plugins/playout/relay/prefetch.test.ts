import { plainFfmpeg } from '../../../helpers/plain-ffmpeg.ts';
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Relay, type RelayPlaylist } from '../../../../plugins/playout/relay/index.ts';
import type { PlaylistRun } from '../../../../plugins/playout/relay/relay.ts';
import { itemArgs } from '../../../../plugins/playout/playlist/feed.ts';
import type { Playlist } from '../../../../plugins/playout/playlist/schema.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { makeClip } from '../playlist/media.ts';
import { alive, capture, dtsSteps, freePort, log, probePackets, tempDir } from './media.ts';

/*
 * The next playlist item starts ahead of the join (real ffmpeg items, copied): each join passes
 * from the end of one item to the next item's first keyframe without waiting for the next ffmpeg
 * to start, so the channel keeps the wall clock's pace item after item; the output stays one
 * continuous stream. A playlist whose items have no known duration joins as before.
 */

const SECONDS = 1.5;
const ITEMS = 8;

interface Joins { waits: number[]; started: number; firstAt: number; lastEnd: number }

function playlist(files: string[], duration: number | undefined, joins: Joins): RelayPlaylist {
  const pl = { items: [], loop: false, shuffle: false, mismatch: 'refuse', format: { width: 320, height: 240, fps: 25, video_bitrate_kbit: 300, audio_bitrate_kbit: 64 }, updated_at: 1, name: 'p' } as unknown as Playlist;
  let at = 0;
  let prepared: PlaylistRun | undefined;
  let endedAt = 0;
  const make = (): PlaylistRun | undefined => {
    if (at >= files.length) return undefined;
    const f = files[at++]!;
    return { url: f, args: itemArgs(f, { source: f }, pl, false), duration };
  };
  return {
    next: () => { const r = prepared ?? make(); prepared = undefined; return r; },
    prefetch: () => (prepared ??= make()),
    started: () => {
      const now = Date.now();
      if (joins.started === 0) joins.firstAt = now;
      else joins.waits.push(now - endedAt);
      joins.started++;
    },
    ended: () => { endedAt = joins.lastEnd = Date.now(); return false; },
    status: () => ({ name: 'p', index: at, current: null, position: 0, next: null, played: joins.started, skipped: 0 }),
  };
}

async function play(t: { teardown(fn: () => unknown): void }, files: string[], duration: number | undefined): Promise<{ joins: Joins; file: string; pids: number[] }> {
  const port = await freePort();
  const joins: Joins = { waits: [], started: 0, firstAt: 0, lastEnd: 0 };
  const relay = new Relay({ id: 'playlist:p', url: 'playlist:p', inputOptions: [], port, ffmpeg: plainFfmpeg, label: 'prefetch', log, playlist: playlist(files, duration, joins) });
  t.teardown(() => relay.stop());
  await relay.start();
  const out = capture(t, port);
  let pids: number[] = [];
  await waitFor(() => {
    if (relay.pids().length > pids.length) pids = relay.pids();
    return joins.started === files.length && joins.lastEnd > 0 && relay.status().looping;
  }, { timeout: 90_000, what: 'every item played' });
  out.close();
  await relay.stop();
  const file = join(tempDir(t), 'out.ts');
  writeFileSync(file, out.bytes());
  return { joins, file, pids };
}

t.test('items started ahead: joins do not wait for ffmpeg, the channel keeps the clock', async (t) => {
  const dir = tempDir(t);
  const files = await Promise.all(Array.from({ length: ITEMS }, (_, i) => makeClip(dir, `i${i}.mp4`, SECONDS)));
  const ahead = await play(t, files, SECONDS);
  t.equal(ahead.joins.waits.length, ITEMS - 1, `${ITEMS - 1} joins`);
  const wall = (ahead.joins.lastEnd - ahead.joins.firstAt) / 1000;
  // on the clock: the aims keep time (a little ahead at most: items read with -re may end early), never behind
  // (the bound behind is loose: three suites on two cores made ffmpeg itself lag 0.2 s; a join's
  // start-up not started ahead costs about 0.2 s each, 1.5 s over the 8 joins, test 7 below)
  t.ok(wall > ITEMS * SECONDS - 0.8 && wall < ITEMS * SECONDS + 0.6, `${ITEMS} items of ${SECONDS} s took ${wall.toFixed(2)} s of wall clock: not behind`);
  const v = dtsSteps(probePackets(ahead.file), 'video');
  t.ok(v.maxGap <= 0.042 && v.minStep > 0, `one continuous video timeline (largest step ${v.maxGap.toFixed(3)} s)`);
  t.ok(ahead.pids.length >= 2, 'two item runs at once near a join');
  t.ok(ahead.pids.every((p) => !alive(p)), 'stop leaves no child');

  // the same items without a known duration: each join waits for the next ffmpeg (as before)
  const plain = await play(t, files, undefined);
  // medians: on a busy box one join of either run may wait half a second for a scheduler slot
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const mid = median(plain.joins.waits);
  const midAhead = median(ahead.joins.waits);
  t.ok(midAhead < mid, `joins waited ${midAhead.toFixed(0)} ms (median; ${ahead.joins.waits.join(', ')}), without the start ahead ${mid.toFixed(0)} ms (${plain.joins.waits.join(', ')})`);
  const plainWall = (plain.joins.lastEnd - plain.joins.firstAt) / 1000;
  t.ok(plainWall - wall > 0.2, `without it the same items took ${plainWall.toFixed(2)} s: each join's start-up adds up`);
});
