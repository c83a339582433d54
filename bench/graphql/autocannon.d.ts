/** The request options of autocannon this benchmark adds to bench/memfs/autocannon.d.ts. */
declare module 'autocannon' {
  namespace autocannon {
    interface Options { method?: string; body?: string; headers?: Record<string, string> }
  }
}
