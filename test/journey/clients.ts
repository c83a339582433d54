import { spawn, type ChildProcess } from 'node:child_process';
import type { TestLike } from '../helpers/app.ts';
import { SOURCE } from './kit.ts';

/*
 * What the journey's clients send, as data: restreamer-ui's Settings page (datarhei/restreamer-ui,
 * src/views/Settings.js: it loads `GET /api/v3/config`, turns lists into lines and listen addresses
 * into their port, and on save turns them back, `:port`, and PUTs the WHOLE object), its channel
 * (an ingest process whose tee output writes HLS to memfs and publishes the channel over RTMP and
 * SRT) and its egress processes (they read that publication and pick the tracks with `-map 0:0`
 * for video and `-map 0:1` for audio), and the Python client's partial config body.
 */

type Obj = Record<string, any>;

/** restreamer-ui's Settings page load and save: the one copy in test/helpers/restreamer-ui.ts. */
export { uiLoad as settingsLoad, uiSave as settingsSave } from '../helpers/restreamer-ui.ts';

/** The Python client's first step (its live suite's setup): a partial config that turns auth on. */
export const pythonConfigBody = (username: string, password: string): Obj => ({
  version: 3, api: { auth: { enable: true, username, password } }, srt: { enable: true }, rtmp: { enable: true }, sessions: { ip_ignorelist: [] },
});

/**
 * The channel's ingest process as restreamer-ui writes it for a virtual source (its VirtualVideo
 * and VirtualAudio sources: lavfi inputs, encoded): its tee writes HLS into memfs and publishes the
 * channel as `<channel>.stream` over RTMP and `<channel>` over SRT (restreamer-ui's
 * src/utils/restreamer.js). A camera pushing to the service's own RTMP server would publish
 * `<channel>.stream` itself, and the page then leaves the tee's RTMP publication out.
 */
export function ingestProcess(channel: string): Obj {
  const tee = `[f=hls:start_number=0:hls_time=2:hls_list_size=6:hls_flags=append_list+delete_segments:hls_segment_filename={memfs^:}/${channel}_%04d.ts:method=PUT]{memfs}/${channel}.m3u8`
    + `|[f=flv]{rtmp,name=${channel}.stream}|[f=mpegts]{srt,name=${channel},mode=publish}`;
  return {
    id: `restreamer-ui:ingest:${channel}`, reference: channel, type: 'ffmpeg', autostart: true,
    reconnect: true, reconnect_delay_seconds: 1, stale_timeout_seconds: 30,
    options: ['-err_detect', 'ignore_err', '-y'],
    input: [
      { id: 'input_0', address: 'testsrc2=rate=10:size=160x120', options: ['-re', '-f', 'lavfi'] },
      { id: 'input_1', address: 'sine=frequency=440:sample_rate=44100', options: ['-re', '-f', 'lavfi'] },
    ],
    output: [{
      id: 'output_0', address: tee,
      cleanup: [{ pattern: `memfs:/${channel}_*.ts`, purge_on_delete: true }, { pattern: `memfs:/${channel}.m3u8`, purge_on_delete: true }],
      options: ['-map', '0:0', '-map', '1:0', '-codec:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-r', '10', '-g', '20', '-pix_fmt', 'yuv420p',
        '-codec:a', 'aac', '-b:a', '32k', '-flags', '+global_header', '-tag:v', '7', '-tag:a', '10', '-f', 'tee'],
    }],
  };
}

/**
 * An egress process as restreamer-ui makes one (to YouTube, Twitch, another RTMP or SRT server):
 * it reads the channel's publication and maps `0:0` as video and `0:1` as audio, copying both.
 * Here it writes to a file on disk, which ffprobe then reads; `-y` lets it write that file again
 * when it starts again (after a restart, a reload or on another node), as a stream target takes
 * a new publication.
 */
export function egressProcess(channel: string, kind: 'rtmp' | 'srt', file: string): Obj {
  const input = kind === 'rtmp' ? `{rtmp,name=${channel}.stream}` : `{srt,name=${channel},mode=request}`;
  return {
    id: `restreamer-ui:egress:${kind}:${channel}`, reference: channel, type: 'ffmpeg', autostart: true,
    reconnect: true, reconnect_delay_seconds: 1, stale_timeout_seconds: 30,
    options: ['-err_detect', 'ignore_err', '-y'],
    input: [{ id: 'input_0', address: input, options: [] }],
    output: [{
      id: 'output_0', address: `{diskfs}/${file}`,
      options: ['-map', '0:0', '-map', '0:1', '-codec:v', 'copy', '-codec:a', 'copy', '-f', kind === 'rtmp' ? 'flv' : 'mpegts'],
    }],
  };
}

/**
 * A camera that keeps publishing, as OBS does: ffmpeg pushes the test source to `url` and starts
 * again a moment after it ends (refused before its stream is free, or cut), until stopped.
 */
export function camera(t: TestLike, url: string, format: 'flv' | 'mpegts' = 'flv'): { stop(): Promise<void>; starts: number } {
  let child: ChildProcess | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const state = { starts: 0, stop: async () => {} };
  const run = () => {
    if (stopped) return;
    state.starts++;
    child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', ...SOURCE, '-f', format, url], { stdio: 'ignore' });
    child.once('exit', () => { child = undefined; if (!stopped) timer = setTimeout(run, 500); });
  };
  state.stop = async () => {
    stopped = true;
    clearTimeout(timer);
    const c = child;
    if (c && c.exitCode === null && c.signalCode === null) await new Promise((r) => { c.once('exit', r); c.kill('SIGKILL'); });
  };
  t.teardown(() => state.stop());
  run();
  return state;
}
