import { BootError } from '../../sdk/index.ts';

export const FIX = 'apt-get install libsrt-openssl-dev, then scripts/ensure-deps.sh builds the SRT host';

/** Boot failures of the plugin, each saying how to fix it. */
export const srtErrors = {
  host: (path: string, why: string) =>
    new BootError(`srt.enable is true but the SRT host cannot start from ${path}: ${why}. Fix: ${FIX}`),
  bind: (address: string, why: string) => new BootError(`SRT cannot listen on '${address}': ${why}`),
};
