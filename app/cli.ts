import { runCli } from '../core/cli.ts';
import { BUILD } from './build.ts';

/** The command line of this build (entered through main.ts): the core's CLI with every plugin of plugins/ built in. */
await runCli(BUILD);
