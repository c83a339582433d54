import type { ChildrenService } from '../../../sdk/index.ts';

/** The media program and how to start it: the core's confined spawn (`childrenRef`) in the service. */
export interface Ffmpeg {
  binary: string;
  spawn: ChildrenService['spawn'];
}
