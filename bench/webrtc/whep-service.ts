import '../../app/install.ts'; // this service's built-ins, installed into the core
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreService } from '../../core/service.ts';
import { rtmpServiceRef, type RtmpService } from '../../plugins/rtmp/ref.ts';

/**
 * The service of `whep.ts`, in its own OS process so that its CPU and RSS can be read from /proc
 * apart from the driver's, the viewers' and its own children's (the WebRTC host process and the
 * feed ffmpeg: utime and stime exclude children): the default plugins with RTMP and WebRTC on
 * (`bind_address` 127.0.0.1: loopback host candidates only; a token), log level warn (the lines go
 * to stdout, where the driver counts them), `http.threads: 0`.
 *
 *   node bench/webrtc/whep-service.ts <dir> <webrtc token>
 *
 * Sends `{ url, rtmp }` (the RTMP port) once listening; `stop` closes the service and exits; so
 * does a parent that goes away (no orphan).
 */

async function main(): Promise<void> {
  const [dir, token] = process.argv.slice(2);
  if (!dir || !token) throw new Error('usage: whep-service.ts <dir> <token>');
  await mkdir(join(dir, 'disk'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, log: { level: 'warn' }, http: { threads: 0 },
    db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    rtmp: { enable: true, address: '127.0.0.1:0' },
    webrtc: { enable: true, bind_address: '127.0.0.1', token },
  }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  const core = await CoreService.start({ configPath, env, stdoutLog: true });
  const rtmp = core.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void core.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('message', (m) => { if (m === 'stop') stop(); });
  process.on('disconnect', stop);
  process.send!({ url: core.url, rtmp: rtmp.ports().rtmp });
}

if (process.argv[1]?.endsWith('whep-service.ts')) await main();
