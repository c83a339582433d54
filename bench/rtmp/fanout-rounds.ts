import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, head, uptime } from '../llhls/common.ts';
import { buildCheckout, startDeployed } from '../process/deployed.ts';
import { RawPlayer } from './raw-player.ts';

/*
 * RTMP fan-out memory over many rounds (issue 46.4): the service as `npm start` runs it
 * (bench/process/deployed.ts, RTMP on), one ffmpeg publisher (640x360 30 fps x264 + AAC, -re), then
 * R rounds of P raw players (raw-player.ts: handshake, connect, createStream, play) that read for
 * `--hold` seconds and leave together; the service's VmRSS is read a few seconds after each round
 * and 30 s after the last. RSS 5 s after a round swings by 10 MB or more with where V8's and
 * glibc's collections happen to be, so the creep is the median of the last five rounds less the
 * median of the first five (the last less the first is shown too). Aim: at most 5 MB over 20
 * rounds of 500 players.
 *
 *   node bench/rtmp/fanout-rounds.ts [--rounds 20] [--players 500] [--hold 10] [--rate 1500] [--write [tag]]
 */

const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] && !args[i + 1]!.startsWith('--') ? args[i + 1]! : def;
};
const ROUNDS = Number(opt('rounds', '20'));
const PLAYERS = Number(opt('players', '500'));
const HOLD_S = Number(opt('hold', '10'));
const RATE = Number(opt('rate', '1500'));
const WRITE = args.includes('--write');
const TAG = WRITE && opt('write', '') ? `-${opt('write', '')}` : '';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function publish(url: string): ChildProcess {
  return spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-re',
    '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-b:v', `${RATE}k`, '-maxrate', `${RATE}k`,
    '-bufsize', `${RATE}k`, '-g', '60', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-f', 'flv', url], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** One round: P players connected 50 at a time, reading for HOLD_S, then all closed; how many got media. */
async function round(port: number): Promise<{ fed: number; closedEarly: number }> {
  const players: RawPlayer[] = [];
  while (players.length < PLAYERS) {
    for (let i = 0; i < 50 && players.length < PLAYERS; i++) players.push(new RawPlayer(port, 'live', 'bench'));
    await sleep(200);
  }
  await sleep(HOLD_S * 1000);
  const fed = players.filter((p) => p.bytes > 100_000).length;
  const closedEarly = players.filter((p) => p.closed).length;
  for (const p of players) p.close();
  return { fed, closedEarly };
}

async function main(): Promise<void> {
  const entry = buildCheckout(ROOT);
  const dir = await mkdtemp(join(tmpdir(), 'bench-rtmp-rounds-'));
  const port = await freePort();
  const svc = await startDeployed(ROOT, entry, dir, { log: { level: 'warn' }, rtmp: { enable: true, address: `127.0.0.1:${port}` } });
  const load0 = uptime();
  const rows: string[] = [];
  let publisher: ChildProcess | undefined;
  try {
    await sleep(3000);
    const idle = svc.memory().rss;
    publisher = publish(`rtmp://127.0.0.1:${port}/live/bench`);
    await sleep(5000);
    const alone = svc.memory().rss;
    const after: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const { fed, closedEarly } = await round(port);
      await sleep(5000);
      after.push(svc.memory().rss);
      rows.push(`| ${r} | ${fed} | ${closedEarly} | ${after.at(-1)!.toFixed(1)} |`);
      console.log(`round ${r}: ${fed} of ${PLAYERS} fed, ${closedEarly} closed early, RSS ${after.at(-1)!.toFixed(1)} MB`);
    }
    await sleep(30_000);
    const settled = svc.memory().rss;
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const five = Math.min(5, after.length);
    const creep = med(after.slice(-five)) - med(after.slice(0, five));
    const md = [
      `# RTMP fan-out RSS over ${ROUNDS} rounds of ${PLAYERS} players (issue 46.4), ${new Date().toISOString()}`, '',
      `\`node bench/rtmp/fanout-rounds.ts ${args.join(' ')}\`: the service as \`npm start\` runs it (bench/process/deployed.ts, RTMP on,`,
      `log warn), one ffmpeg publisher (640x360 30 fps x264 ${RATE} kbit/s + AAC 128 kbit/s, -re); each round ${PLAYERS} raw RTMP players`,
      `connect (50 every 200 ms), read for ${HOLD_S} s and leave together; VmRSS of the service 5 s after each round. Commit:`,
      `${head()}.`, '',
      `Load before: \`${load0}\`; after: \`${uptime()}\`.`, '',
      `| figure | MB |`, `|---|---|`,
      `| idle, publisher only | ${idle.toFixed(1)}, ${alone.toFixed(1)} |`,
      `| after round 1, after round ${ROUNDS}, 30 s later | ${after[0]!.toFixed(1)}, ${after.at(-1)!.toFixed(1)}, ${settled.toFixed(1)} |`,
      `| creep: median of the last ${five} rounds less median of the first ${five} (aim at most 5) | ${creep.toFixed(1)} |`,
      `| after round ${ROUNDS} less after round 1 | ${(after.at(-1)! - after[0]!).toFixed(1)} |`,
      `| highest after any round | ${Math.max(...after).toFixed(1)} |`, '',
      `| round | players fed (> 100 kB) | closed early | RSS after, MB |`, `|---:|---:|---:|---:|`, ...rows, '',
    ].join('\n');
    console.log(md);
    if (WRITE) {
      const file = join(ROOT, 'bench/results', `rtmp-fanout-rounds-${new Date().toISOString().slice(0, 10)}${TAG}.md`);
      await mkdir(join(ROOT, 'bench/results'), { recursive: true });
      await writeFile(file, md);
      console.log(`wrote ${file}`);
    }
  } finally {
    publisher?.kill('SIGKILL');
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
