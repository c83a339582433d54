import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { FilesystemService, httpHooksRef, RunCredentials, RunUse } from '../../sdk/index.ts';
import type { Resolution } from './command.ts';
import type { Authority } from './manager.ts';
import type { ProcessEntry } from './process-entry.ts';
import type { EntryEnv } from './entry-env.ts';
import { authorityRefusal, runAuthorityRefusal } from './run-uses.ts';

/**
 * What a process's maker may have it do (issue 49), asked of the access plugin's hooks in one
 * place: at a create or update through the API (`authority`, the request's caller), for a plugin
 * acting for a user (`authorityOf`), before each run (`refusal`), for what the engine writes on a
 * waiting process's behalf (`mayWrite`) and for plugins acting for a running process (`may`).
 * Without an access plugin every answer allows and no maker is kept.
 */
export function makerChecks(hooks: Pick<ReturnType<(typeof httpHooksRef)['create']>, 'processUse' | 'processUseBy' | 'makerFolders'>, runs: RunCredentials | undefined, filesystems: readonly FilesystemService[]) {
  const { processUse: use, processUseBy: useBy, makerFolders: folders } = hooks;
  const may = (maker: string, u: RunUse, since: number) => !useBy.isUsed() || useBy.call(maker, u, since) !== false;
  const asked = (verdict: (u: RunUse) => boolean) => ({ runs, filesystems, may: verdict });
  /** Why a run resolved as `r` names what its maker may no longer do (asked at each start), or undefined. */
  const refusal = (maker: string, id: string, r: Resolution, token: string, since: number) => (useBy.isUsed()
    ? runAuthorityRefusal(r, id, token, asked((u) => may(maker, u, since))) : undefined);
  return {
    may,
    refusal,
    /** A plugin acting for `maker` who asked at `since` (`ProcessesService.put(def, maker, since)`): admitted as that user's create. */
    authorityOf: (maker: string, since: number): Authority | undefined => (useBy.isUsed()
      ? { admit: (e: ProcessEntry) => authorityRefusal(e, asked((u) => may(maker, u, since))), maker, since } : undefined),
    /** A create or update through the API: what its command names, asked for the request's caller (kept as the maker). */
    authority: (req: FastifyRequest): Authority | undefined => (use.isUsed()
      ? { admit: (e: ProcessEntry) => authorityRefusal(e, asked((u) => use.call(req, u) !== false)), maker: req.auth?.user } : undefined),
    /**
     * Whether `e`'s maker may have it run now, asked without a run (resolved for a token no listener
     * knows, as its start would be for its own): a process its maker's refusal ended starts again.
     */
    mayRun: ((e) => {
      if (e.maker === undefined || !useBy.isUsed()) return true;
      const run = runs && { processId: e.id, token: randomBytes(24).toString('base64url') };
      const r = e.resolveFor(run);
      return typeof r !== 'string' && refusal(e.maker, e.id, r, run?.token ?? '', e.makerSince) === undefined;
    }) satisfies NonNullable<EntryEnv['makerMayRun']>,
    /**
     * What of the disk folder `e`'s children reach (`ChildSpawnOptions.disk`): its maker's `fs`
     * paths there (`httpHooksRef.makerFolders`, mapped by the mounts); undefined: all of it.
     */
    diskOf: ((e) => {
      if (e.maker === undefined || !folders.isUsed()) return undefined;
      const f = folders.call(e.maker, e.makerSince, (folder) => entriesOf(filesystems, folder));
      if (f === undefined) return undefined;
      const local = (paths: readonly string[]) => paths.flatMap((p) => {
        const d = onDisk(filesystems, p);
        return d === undefined ? [] : [d];
      });
      return { read: local(f.read), write: local(f.write) };
    }) satisfies NonNullable<EntryEnv['makerDisk']>,
    /** Whether `e`'s maker may still have it write `resource` (an `fs` path): its waiting playlist. */
    mayWrite: (e: ProcessEntry, resource: string) => e.maker === undefined || may(e.maker, { type: 'fs', resource, action: 'PUT' }, e.makerSince),
  };
}

/** Where namespace path `p` lies in a local folder: under the longest mount that holds it, when that one has a folder. */
export function onDisk(filesystems: readonly FilesystemService[], p: string): string | undefined {
  if (!p.startsWith('/')) return undefined;
  const path = posix.normalize(p);
  let best: FilesystemService | undefined;
  for (const fs of filesystems) {
    const rel = posix.relative(fs.mount, path);
    if (rel === '..' || rel.startsWith('../') || posix.isAbsolute(rel)) continue;
    if (!best || fs.mount.length > best.mount.length) best = fs;
  }
  if (!best?.root) return undefined;
  // a folder keeps its closing `/` (one to write is made when missing)
  const local = join(best.root, posix.relative(best.mount, path));
  return path.endsWith('/') && !local.endsWith('/') ? `${local}/` : local;
}

/** The entries of namespace folder `folder` in its local folder (a folder's with its closing `/`; links left out: never granted through). */
function entriesOf(filesystems: readonly FilesystemService[], folder: string): string[] | undefined {
  const local = onDisk(filesystems, folder);
  if (local === undefined) return undefined;
  try {
    return readdirSync(local, { withFileTypes: true }).flatMap((d) => (d.isSymbolicLink() ? [] : [d.isDirectory() ? `${d.name}/` : d.name]));
  } catch {
    return undefined;
  }
}
