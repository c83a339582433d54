import type { SendStack } from './stacks.ts';

export function wrtcSender(): SendStack {
  throw new Error('wrtc: not yet');
}
