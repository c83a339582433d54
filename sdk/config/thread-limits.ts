/* Bounds of `http.threads`, in a module without schemas: the runtime relaunch reads them before anything else loads. */

/** Most serving threads `http.threads` accepts (a thread costs its own heap). */
export const MAX_SERVING_THREADS = 64;
/** Most serving threads auto (`-1`) starts, whatever the core count (each costs about 20 MiB). */
export const AUTO_MAX_THREADS = 16;
