import { Bool, ConfigErrorList, describe, Type, type ConfigErrors, type Static } from '../../sdk/index.ts';

/** The `playout` section of the configuration, owned by this plugin. */
export const PlayoutConfig = describe(Type.Object({
  enable: Bool(false),
  min_port: Type.Integer({ default: 0, minimum: 0, maximum: 65535 }),
  max_port: Type.Integer({ default: 0, minimum: 0, maximum: 65535 }),
}, { default: {} }), {
  enable: 'Read `playout:` process inputs through a relay that keeps them continuous (plugin `playout`).',
  min_port: 'Lowest loopback TCP port of the playout relays (one per `playout:` input of a running process).',
  max_port: 'Highest loopback TCP port of the playout relays.',
});
export type PlayoutConfig = Static<typeof PlayoutConfig>;

/** The plugin's settings: the `playout` section (enable, min_port, max_port). */
export const PlayoutSettings = PlayoutConfig;
export type PlayoutSettings = PlayoutConfig;

/** Rules a schema cannot state (reference 6.2); keys relative to `playout`. */
export function validatePlayout(s: PlayoutSettings): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.enable && s.min_port >= s.max_port) errs.add('min_port', 'must be smaller than playout.max_port');
  return errs.map;
}

const Io = Type.Object({
  state: Type.Union([Type.Literal('running'), Type.Literal('idle')]),
  packet: Type.Integer(),
  time: Type.Integer(),
  size_kb: Type.Integer(),
});

/** `PlayoutStatus` of the API (reference 5.9): the figures of one relay. */
export const PlayoutStatusSchema = Type.Object({
  id: Type.String({ description: 'The input address as the process runs it (playout:...)' }),
  url: Type.String({ description: 'The source URL read now' }),
  stream: Type.Integer(),
  queue: Type.Integer(),
  aqueue: Type.Integer(),
  dup: Type.Integer(),
  drop: Type.Integer(),
  enc: Type.Integer(),
  looping: Type.Boolean(),
  duplicating: Type.Boolean(),
  gop: Type.String(),
  debug: Type.Unknown(),
  input: Io,
  output: Io,
  swap: Type.Object({ url: Type.String(), status: Type.String(), lasturl: Type.String(), lasterror: Type.String() }),
});

/** The path parameters of every playout route. */
export const PlayoutParams = Type.Object({ id: Type.String(), inputid: Type.String() });
export const KeyframeParams = Type.Object({ id: Type.String(), inputid: Type.String(), name: Type.String() });
