import type { EventTypeDeclaration, EventTypeSpec, PluginDefinition } from '../../sdk/index.ts';
import { REQUIRED_PLUGINS } from './required.ts';

/*
 * The event catalogue (`GET /api/v3/events/types`, the table in CONTRIBUTING.md): every type as
 * its emitters declare it, made here once so the service and `scripts/events-catalogue.ts` list
 * the same. Order: the core's (the process engine's, the ingest hooks', the config routes'), then
 * each plugin's in the build's order, then the other loaded plugins' (vendors').
 */

/** Declarations under the name they are listed with. */
export interface EmitterDeclarations {
  readonly emitter: string;
  readonly events?: readonly EventTypeDeclaration[];
}

const PEER = ['stream', 'peer', 'protocol'];
const PEER_PAYLOAD = { remote: 'client address `ip:port`' };
const TRAFFIC = { ...PEER_PAYLOAD, rx_bytes: 'bytes received from the client', tx_bytes: 'bytes sent to the client' };
const peer = (type: string, description: string, payload: Record<string, string>): EventTypeDeclaration =>
  Object.freeze({ type, description, subject: PEER, payload });

/** The core's own types besides the process engine's: the ingest hooks' and the config routes'. */
const CORE_EMITTERS: readonly EmitterDeclarations[] = [
  {
    emitter: 'ingest',
    events: [
      peer('ingest.publish.start', 'A publisher was accepted (RTMP, SRT, vendor ingest).', PEER_PAYLOAD),
      peer('ingest.publish.stop', 'A publisher is gone (closed, broken, kicked).', TRAFFIC),
      peer('ingest.play.start', 'A player joined a stream.', PEER_PAYLOAD),
      peer('ingest.play.stop', 'A player left a stream.', TRAFFIC),
    ],
  },
  {
    emitter: 'core',
    events: [{ type: 'config.changed', description: 'A new configuration was stored (`PUT /api/v3/config`); it applies at the next reload.', subject: [], payload: {} }],
  },
];

/**
 * One entry per type, in declaration order; a type declared by several emitters keeps its first
 * declaration and lists every emitter (`memfs, disk-fs`).
 */
export function mergeEventTypes(groups: Iterable<EmitterDeclarations>): EventTypeSpec[] {
  const byType = new Map<string, { decl: EventTypeDeclaration; emitters: string[] }>();
  for (const g of groups) {
    for (const decl of g.events ?? []) {
      const seen = byType.get(decl.type);
      if (!seen) byType.set(decl.type, { decl, emitters: [g.emitter] });
      else if (!seen.emitters.includes(g.emitter)) seen.emitters.push(g.emitter);
    }
  }
  return [...byType.values()].map(({ decl, emitters }) => Object.freeze({
    type: decl.type, emitter: emitters.join(', '), subject: Object.freeze([...decl.subject]), description: decl.description,
    payload: Object.freeze({ ...decl.payload }),
  }));
}

/**
 * The catalogue of the core with `plugins` (the build's built-ins, loaded or not, then the loaded
 * others; a name seen twice counts once).
 */
export function eventCatalogue(plugins: readonly PluginDefinition[]): EventTypeSpec[] {
  const names = new Set<string>();
  const defs = [...REQUIRED_PLUGINS, ...plugins].filter((d) => !names.has(d.name) && names.add(d.name));
  const [required, rest] = [defs.slice(0, REQUIRED_PLUGINS.length), defs.slice(REQUIRED_PLUGINS.length)];
  const asGroup = (d: PluginDefinition): EmitterDeclarations => ({ emitter: d.name, events: d.events });
  return mergeEventTypes([...required.map(asGroup), ...CORE_EMITTERS, ...rest.map(asGroup)]);
}
