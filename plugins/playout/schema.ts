import { Bool, ConfigErrorList, type ConfigErrors, Port, section, type Static, Type } from '../../sdk/index.ts';

/** The `playout` section of the configuration, owned by this plugin. */
export const PlayoutConfig = section({
  enable: [Bool(false), 'Read `playout:` process inputs through a relay that keeps them continuous (plugin `playout`).'],
  min_port: [Port(0), 'Lowest loopback TCP port of the playout relays (one per `playout:` input of a running process).'],
  max_port: [Port(0), 'Highest loopback TCP port of the playout relays.'],
});
export type PlayoutConfig = Static<typeof PlayoutConfig>;

/** Rules a schema cannot state (reference 6.2); keys relative to `playout`. */
export function validatePlayout(s: PlayoutConfig): ConfigErrors {
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
  // the relay's counters (reference 5.9)
  stream: Type.Integer(), queue: Type.Integer(), aqueue: Type.Integer(),
  dup: Type.Integer(), drop: Type.Integer(), enc: Type.Integer(),
  looping: Type.Boolean(), duplicating: Type.Boolean(),
  gop: Type.String(),
  debug: Type.Unknown(),
  input: Io,
  output: Io,
  swap: Type.Object({ url: Type.String(), status: Type.String(), lasturl: Type.String(), lasterror: Type.String() }),
});

/** The path parameters of every playout route. */
export const PlayoutParams = Type.Object({ id: Type.String(), inputid: Type.String() });
export const KeyframeParams = Type.Object({ id: Type.String(), inputid: Type.String(), name: Type.String() });
