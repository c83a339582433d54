import {
  definePlugin, optional, basicAuthRef, eventsRef, filesystemEvents, filesystemsRef, placeholdersRef, serverRef,
  servingThreadsRef, fsServeHooksRef, replayServed, threadServeMode, MimeTable, type ServedReport,
} from '../../sdk/index.ts';
import { MemfsReplica } from './replica.ts';
import { commitUpload } from './commit.ts';
import type { CommitRequest, UploadNotice } from './thread-upload.ts';

/** Bytes of uploads the serving threads receive at once, all together (the memfs limit when smaller); others stream to main. */
const THREAD_UPLOAD_MAX = 64 * 1024 * 1024;
import { MemfsConfig, validateMemfs } from './schema.ts';
import { MemFilesystem, type MemStore } from './service.ts';

/**
 * The memory filesystem `mem`: `/api/v3/fs/mem`, the public `/memfs/*` (ffmpeg PUTs HLS there
 * through `{memfs}`), capacity with optional purge. Its files survive config reloads.
 */
export default definePlugin({
  name: 'memfs',
  configKey: 'storage.memory',
  configSchema: MemfsConfig,
  validate: validateMemfs,
  reads: ['storage'],
  deps: {
    placeholders: placeholdersRef, server: serverRef, basicAuth: optional(basicAuthRef), events: optional(eventsRef),
    threads: optional(servingThreadsRef),
  },
  provides: [filesystemsRef],
  setup(ctx) {
    const cfg = ctx.config;
    const mime = MimeTable.load(ctx.sections.storage.mimetypes_file);
    const store = ctx.retain<MemStore>('files', () => ({ files: new Map(), seq: 0 }));
    const threads = ctx.deps.threads;
    const replica = threads && threads.count > 0 ? new MemfsReplica() : undefined;
    const a = cfg.auth;
    const fs = new MemFilesystem(store, {
      limit: cfg.max_size_mbytes * 1024 * 1024, purge: cfg.purge, mime, events: filesystemEvents(ctx.deps.events, 'mem'), replica,
      // the core's file door serves `/memfs`; writes behind Basic auth when it is on
      writes: a.enable ? { basic: { username: a.username, password: a.password } } : {},
    });
    const freed = fs.resize();
    if (freed > 0) ctx.log.info({ freed }, 'purged the oldest files to fit the new size limit');
    const { used, limit } = fs.usage();
    if (limit > 0 && used > limit) ctx.log.warn({ used, limit }, 'memfs holds more than its limit; writes get 507 until files are deleted');
    ctx.provide(filesystemsRef, fs);

    const { server } = ctx.deps;
    ctx.deps.placeholders.register({
      name: 'memfs',
      aliases: ['fs:mem'],
      contexts: ['address', 'options'],
      // computed on every use: the port is known only once the app listens
      value: () => {
        const host = server.host().includes(':') ? `[${server.host()}]` : server.host();
        const a = cfg.auth;
        const cred = a.enable ? `${encodeURIComponent(a.username)}:${encodeURIComponent(a.password)}@` : '';
        return `http://${cred}${host}:${server.port()}/memfs`;
      },
    });


    if (threads && replica) {
      const hooks = ctx.hooks.get(fsServeHooksRef);
      const mode = () => threadServeMode(hooks);
      // uploads on the threads; with auth on only those with exactly the configured credential
      // (the rest goes to main), and none when no plugin checks Basic auth (main refuses every write)
      const a = cfg.auth;
      const maxBytes = Math.min(cfg.max_size_mbytes > 0 ? cfg.max_size_mbytes * 1024 * 1024 : Infinity, THREAD_UPLOAD_MAX);
      const uploads = !a.enable ? { maxBytes } : ctx.deps.basicAuth ? { maxBytes, basic: { username: a.username, password: a.password } } : undefined;
      const channel = replica.attach(threads, { corsOrigins: [...ctx.sections.storage.cors.origins], uploads }, () => fs.entries(), mode);
      // the thread took no X-Forwarded-For client: its TCP peer is the address main's route would judge
      const basic = ctx.deps.basicAuth;
      const checkCommit = a.enable && basic?.check
        ? (c: CommitRequest) => basic.check!({ address: c.remote, authorization: c.headers.authorization }, { username: a.username, password: a.password })
        : undefined;
      channel.onMessage((m) => {
        if (Array.isArray(m)) replayServed(hooks, '/memfs', m as ServedReport[]);
        else {
          const c = m as CommitRequest | UploadNotice;
          if (c.t === 'begin') fs.pending?.begin(c.path);
          else if (c.t === 'abandon') fs.pending?.end(c.path);
          else {
            replica.received(c.data.byteLength);
            void commitUpload(fs, hooks, c, checkCommit).then((r) => {
              fs.pending?.end(c.path);
              replica.reply(r);
            });
          }
        }
      });
      // plugins tap the file hooks in their setup, after this one maybe: look again once all are mounted
      ctx.onListen(() => replica.mode(mode()));
      ctx.onClose(() => channel.close());
    }
  },
});
