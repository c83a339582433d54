import { spawn } from 'node:child_process';
import type { Ffmpeg } from '../../plugins/playout/relay/ffmpeg.ts';

/**
 * ffmpeg started by node's own spawn, without the core's confinement: for the playout relay's unit
 * tests, which run the relay without a service (the service passes its confined spawn).
 */
export const plainFfmpeg: Ffmpeg = {
  binary: 'ffmpeg',
  spawn: (file, args, o = {}) => spawn(file, args, { stdio: o.stdio ?? ['ignore', 'ignore', 'pipe'], env: o.env ?? {} }),
};
