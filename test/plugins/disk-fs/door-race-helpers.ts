import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

/*
 * The racing swapper of door-race.test.ts: a folder `race` of the disk root and a link `swap` to
 * a folder of secrets exchanged with renameat2(RENAME_EXCHANGE) in a loop, as a child writing the
 * disk root could do. A tiny C program the test compiles with gcc (unconfined: a helper of the test).
 */

const SWAPPER_C = `
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
static int swap(int dir) { return syscall(SYS_renameat2, dir, "race", dir, "swap", RENAME_EXCHANGE); }
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
  if (dir < 0) { perror("open"); return 2; }
  time_t end = time(NULL) + atoi(argv[2]);
  long n = 0;
  for (;;) {
    if (swap(dir) != 0) { perror("renameat2"); return 3; }
    n++;
    if ((n & 1023) == 0 && time(NULL) >= end) break;
  }
  /* n is even here: race is the real folder again */
  printf("%ld\\n", n);
  return 0;
}
`;

/** Compiles the swapper into `dir`; undefined (with the reason) when there is no gcc. */
export async function buildSwapper(dir: string): Promise<{ bin?: string; reason?: string }> {
  const src = join(dir, 'swapper.c');
  const bin = join(dir, 'swapper');
  await writeFile(src, SWAPPER_C);
  try {
    await promisify(execFile)('gcc', ['-O2', '-o', bin, src]);
    return { bin };
  } catch (err) {
    return { reason: `no gcc to build the swapper: ${(err as Error).message.split('\n')[0]}` };
  }
}

/** Runs the swapper on `disk` for `seconds`; resolves with the number of exchanges. */
export function runSwapper(bin: string, disk: string, seconds: number): { child: ChildProcess; done: Promise<number> } {
  const child = spawn(bin, [disk, String(seconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { err += c.toString(); });
  const done = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`swapper exited ${code}: ${err}`))));
  });
  return { child, done };
}

/** Names of the files both folders hold; the secrets' copies carry the marker. */
export const SHARED = ['config.json', 'seg.ts', 'index.html'];
/** Files the test deletes and uploads again through the service, in both folders. */
export const VICTIMS = Array.from({ length: 24 }, (_, i) => `victim-${i}.txt`);
/** Only in the secrets: a name (and size) a listing must never show. */
export const ONLY_SECRET = 'only-secret.txt';

export interface RaceFixture {
  marker: string;
  secrets: string;
  /** Sizes of the race folder's files (a HEAD of a secret would show another). */
  sizes: Map<string, number>;
}

/**
 * `disk/race` (plain files) and `disk/swap` -> `secrets` (the same names, each with the marker
 * and a different size, plus ONLY_SECRET).
 */
export async function raceFixture(disk: string, secrets: string): Promise<RaceFixture> {
  const marker = `SECRET-MARKER-${randomBytes(8).toString('hex')}`;
  const race = join(disk, 'race');
  await mkdir(race, { recursive: true });
  await mkdir(secrets, { recursive: true });
  const sizes = new Map<string, number>();
  for (const name of [...SHARED, ...VICTIMS]) {
    const plain = `public ${name}\n`.repeat(40);
    await writeFile(join(race, name), plain);
    sizes.set(name, Buffer.byteLength(plain));
    await writeFile(join(secrets, name), `{"password": "${marker}", "name": "${name}"}\n`.repeat(7));
  }
  await writeFile(join(secrets, ONLY_SECRET), `${marker}\n`.repeat(3));
  await symlink(secrets, join(disk, 'swap'));
  return { marker, secrets, sizes };
}

/** Every file of a folder (recursively) with the hash of its content. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out[p.slice(dir.length)] = createHash('sha256').update(await readFile(p)).digest('hex');
  }
  return out;
}

/** What changed between two snapshots: names added, changed and removed (at most 10 each), with counts. */
export function changes(before: Record<string, string>, after: Record<string, string>): Record<string, { count: number; first: string[] }> {
  const list = (names: string[]) => ({ count: names.length, first: names.slice(0, 10) });
  return {
    added: list(Object.keys(after).filter((n) => !(n in before))),
    changed: list(Object.keys(after).filter((n) => n in before && before[n] !== after[n])),
    removed: list(Object.keys(before).filter((n) => !(n in after))),
  };
}
