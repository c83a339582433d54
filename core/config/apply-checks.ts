import { createSocket } from 'node:dgram';
import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { ipFamily } from '../../sdk/ip.ts';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { dirname, resolve } from 'node:path';
import type { ConfigErrors } from '../../sdk/index.ts';
import type { ConfigData } from './config-data.ts';
import { refuseConfigUnderDisk } from '../store/served-state.ts';
import type { HeldPorts } from './held-ports.ts';
import { listenerCollisions, listenersOf, type KeptPorts, type Listener } from './listeners.ts';

/*
 * What would fail when a config is applied, beyond its values (those are validate.ts's and the
 * plugins' rules): listeners that take each other's port, ports another program holds, TLS files
 * that are not a PEM certificate and its key, folders the service cannot create, a disk folder
 * that would serve the config file. `PUT
 * /api/v3/config` answers 400 with these and stores nothing; a reload runs them again first.
 */

function add(errs: ConfigErrors, key: string, msg: string): void {
  (errs[key] ??= []).push(msg);
}

/**
 * Every apply error of `cfg` (the active config: stored + environment); `held`: this process's
 * ports; `configPath`: the config file; `kept`: the API ports a reload binds again for port 0.
 */
export async function applyErrors(cfg: ConfigData, held: HeldPorts, configPath: string, kept: KeptPorts = {}): Promise<ConfigErrors> {
  const listeners = listenersOf(cfg, kept);
  const errs = listenerCollisions(listeners);
  await Promise.all(listeners.map(async (l) => {
    if (errs[l.key]) return;
    // a listener the running service has as it is (same key, protocol, host and port) is its own:
    // nothing to try (binding its port would find the service itself)
    if (held.listeners?.some((r) => sameListener(r, l))) return;
    // a port this service holds is freed before the new listeners bind: only the host is tried
    const own = l.port !== 0 && (l.proto === 'tcp' ? held.tcp : held.udp).has(l.port);
    const why = await probe(l, own ? 0 : l.port);
    if (why) add(errs, l.key, why);
  }));
  for (const [k, m] of Object.entries(await tlsFileErrors(cfg))) for (const msg of m) add(errs, k, msg);
  const folders: [string, string][] = [['db.dir', cfg.db.dir]];
  if (loads(cfg, 'disk-fs')) folders.push(['storage.disk.dir', cfg.storage.disk.dir]);
  for (const [key, dir] of folders) {
    const why = await folderError(dir);
    if (why) add(errs, key, why);
  }
  if (loads(cfg, 'disk-fs')) {
    try { refuseConfigUnderDisk(configPath, cfg); } catch (err) { add(errs, 'storage.disk.dir', (err as Error).message); }
  }
  return errs;
}

function sameListener(a: Listener, b: Listener): boolean {
  return a.key === b.key && a.proto === b.proto && a.host === b.host && a.port === b.port;
}

function loads(cfg: ConfigData, plugin: string): boolean {
  return cfg.plugins.some((p) => p === '*' || p === plugin || (typeof p === 'object' && p.name === plugin));
}

/** Binds the listener's host and `port` for a moment: undefined when it can, else why not. */
async function probe(l: Listener, port: number): Promise<string | undefined> {
  try {
    if (l.proto === 'tcp') {
      const server = createServer();
      await new Promise<void>((ok, fail) => {
        server.once('error', fail);
        server.listen({ host: l.host, port, exclusive: true }, () => ok());
      });
      await new Promise<void>((ok) => server.close(() => ok()));
    } else {
      const socket = createSocket(ipFamily(l.host) === 6 ? 'udp6' : 'udp4');
      await new Promise<void>((ok, fail) => {
        socket.once('error', fail);
        socket.bind(port, l.host, () => ok());
      });
      await new Promise<void>((ok) => socket.close(() => ok()));
    }
    return undefined;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const at = `${l.what} ${l.proto.toUpperCase()} ${l.host}:${l.port}`;
    if (e.code === 'EADDRINUSE') return `${at}: the port is in use by another program`;
    if (e.code === 'EACCES') return `${at}: not permitted (ports below 1024 need privileges the service does not have)`;
    if (e.code === 'EADDRNOTAVAIL') return `${at}: ${l.host} is not an address of this machine`;
    if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return `${at}: cannot resolve ${l.host}`;
    return `${at}: cannot listen (${e.message})`;
  }
}

/**
 * `tls.cert_file` and `tls.key_file` (TLS on, not automatic): PEM that parses, a key that
 * belongs to the certificate, and together a context OpenSSL accepts (what the HTTPS and RTMPS
 * listeners will build). A missing file is validate.ts's 409.
 */
async function tlsFileErrors(cfg: ConfigData): Promise<ConfigErrors> {
  const tls = cfg.tls;
  const errs: ConfigErrors = {};
  if (!tls.enable || tls.auto || !tls.cert_file || !tls.key_file) return errs;
  let cert: Buffer;
  let key: Buffer;
  try { cert = await readFile(tls.cert_file); } catch (err) { add(errs, 'tls.cert_file', `cannot read ${tls.cert_file}: ${(err as Error).message}`); }
  try { key = await readFile(tls.key_file); } catch (err) { add(errs, 'tls.key_file', `cannot read ${tls.key_file}: ${(err as Error).message}`); }
  if (Object.keys(errs).length) return errs;
  let x509: X509Certificate | undefined;
  if (!/-----BEGIN [A-Z0-9 ]*CERTIFICATE-----/.test(cert!.toString('latin1'))) add(errs, 'tls.cert_file', `${tls.cert_file} is not a PEM certificate`);
  else {
    try { x509 = new X509Certificate(cert!); } catch (err) { add(errs, 'tls.cert_file', `${tls.cert_file} is not a PEM certificate (${(err as Error).message})`); }
  }
  let pkey: ReturnType<typeof createPrivateKey> | undefined;
  try { pkey = createPrivateKey(key!); } catch (err) { add(errs, 'tls.key_file', `${tls.key_file} is not a PEM private key without passphrase (${(err as Error).message})`); }
  if (x509 && pkey && !x509.checkPrivateKey(pkey)) add(errs, 'tls.key_file', `${tls.key_file} is not the key of the certificate in tls.cert_file`);
  if (Object.keys(errs).length) return errs;
  try {
    createSecureContext({ cert: cert!, key: key! });
  } catch (err) {
    add(errs, 'tls.cert_file', `the certificate and key are refused by TLS (${(err as Error).message})`);
  }
  return errs;
}

/** A folder the service writes (created at boot when missing): why it could not be, or undefined. */
async function folderError(dir: string): Promise<string | undefined> {
  let p = resolve(dir);
  for (;;) {
    const s = await stat(p).catch(() => undefined);
    if (s) {
      if (!s.isDirectory()) return `${p} is not a folder`;
      try {
        await access(p, constants.W_OK | constants.X_OK);
        return undefined;
      } catch {
        return p === resolve(dir) ? `${p} is not writable by the service` : `${resolve(dir)} cannot be created: ${p} is not writable by the service`;
      }
    }
    const up = dirname(p);
    if (up === p) return `${resolve(dir)} cannot be created`;
    p = up;
  }
}
