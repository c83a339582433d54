import { childrenRef, isBootError, type ChildrenService } from '../sdk/index.ts';
import { CoreService } from './service.ts';
import { installBuild, type CoreBuild } from './config/build.ts';
import { startQuietCollector } from './runtime/quiet-gc.ts';
import { mallocTrim } from './runtime/malloc-trim.ts';

/**
 * The command line: `npm start [-- --config PATH]` (entered through a build's entry, app/main.ts,
 * which hands over its `build`: the built-in plugins and the config's shape). The only place that listens.
 */
export async function runCli(build: CoreBuild): Promise<void> {
  installBuild(build);
  let service: CoreService;
  try {
    service = await CoreService.start({
      argv: process.argv.slice(2), stdoutLog: process.env.CORE_LOG_STDOUT !== 'false',
      // no app is left: exit, so the supervisor starts the service again on the file (it boots)
      onFatal: () => process.exit(1),
    });
  } catch (err) {
    const e = err as Error;
    process.stderr.write(`\nThe service could not start:\n${e.message}\n${isBootError(e) && e.cause ? `cause: ${(e.cause as Error).message}\n` : ''}`);
    process.exit(1);
  }
  const cfg = service.app.kernel.config;
  const host = service.loopbackOnly ? '127.0.0.1' : service.app.kernel.server.host();
  const base = `http://${host}:${service.port}`;
  const login = cfg.api.auth.enable
    ? `log in at POST ${base}/api/login with api.auth.username/password from ${service.configPath}`
    : `auth is off (set api.auth.enable, username and password in ${service.configPath} to turn it on)`
      + (service.loopbackOnly ? '\n  loopback only: with auth off an address without a host binds 127.0.0.1 (turn auth on, or write 0.0.0.0:PORT to open it anyway)' : '');
  const https = service.httpsPort ? `  HTTPS: https://${host}:${service.httpsPort}\n` : '';
  const children = (service.app.kernel.services.resolve(childrenRef) as ChildrenService).confinement;
  const confined = children.mechanism === 'none'
    ? `children: ${children.detail}${cfg.encoder.confinement.require ? ' (encoder.confinement.require: none will run)' : ''}`
    : `children: ${children.detail}`;
  process.stderr.write(`\nmedia process core listening on ${base}\n${https}  API: ${base}/api  (docs: ${base}/api/swagger)\n  ${login}\n  ${confined}\n  config: ${service.configPath}\n\n`);

  // not a net that catches: node still ends the process (code 1) on an uncaught exception or an
  // unhandled rejection, as it should (a bug); this only puts the reason into the service's log too.
  // Faults of one client are caught at each protocol's per-connection boundary, never here.
  process.on('uncaughtExceptionMonitor', (err, origin) => {
    try {
      service.app.kernel.log.fatal({ err, origin }, 'the service ends on an uncaught exception (a bug: please report it)');
    } catch { /* node's own report still goes to stderr */ }
  });

  // the heap a boot or a burst grew to goes back once the service is quiet (runtime/README.md)
  const collector = startQuietCollector(undefined, mallocTrim());

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    collector.stop();
    process.stderr.write(`${signal}: shutting down\n`);
    const force = setTimeout(() => process.exit(1), 20_000);
    force.unref();
    service.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
