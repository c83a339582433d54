import type { PlaceholderDefinition, PlaceholderSection } from '../../sdk/index.ts';
import { runPassphrase } from './run-scope.ts';
import { callerHost } from './schema.ts';

/**
 * `{srt,name=...[,mode=...][,latency=µs]}` (reference 8.2): a local caller URL with Core's
 * streamid. The mode defaults by section (publish in an output, request elsewhere); the registry's
 * defaults are per placeholder, not per section, so the default `mode` reads the section the
 * engine asked for in the `value` call it makes just before filling the slots (same statement).
 * A child never gets `srt.token` or `srt.passphrase`: with either set, the streamid carries its
 * run's token and the URL its run's passphrase (run-scope.ts), which the listener accepts for the
 * resources and modes the command names; without a run (a command shown, not run) neither.
 */
export function srtPlaceholder(opts: { host: string; port: () => number; token: string; passphrase: string }): PlaceholderDefinition {
  let section: PlaceholderSection = 'input';
  const defaults = {
    latency: '20000',
    get mode(): string {
      return section === 'output' ? 'publish' : 'request';
    },
  };
  return {
    name: 'srt',
    contexts: ['address'],
    defaults,
    value(s, run) {
      section = s;
      // ffmpeg passes the streamid through as written, so the URL carries it unencoded like Core's
      const token = run && (opts.token || opts.passphrase) ? `,token:${run.token}` : '';
      const pass = run && opts.passphrase ? `&passphrase=${runPassphrase(run.token)}` : '';
      return `srt://${callerHost(opts.host)}:${opts.port()}?mode=caller&transtype=live&latency={latency}&streamid={name},mode:{mode}${token}${pass}`;
    },
  };
}
