/*
 * Installs this service's build (build.ts) into the core when imported: for code that drives the
 * core's own functions (the config loader, the boot plan, the service) with the built-ins, as the
 * repository's tests and benches do. The entry (cli.ts) installs it itself.
 */
import { installBuild } from '../core/config/build.ts';
import { BUILD } from './build.ts';

installBuild(BUILD);
