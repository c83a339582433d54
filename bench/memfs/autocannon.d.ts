/** The part of autocannon's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  namespace autocannon {
    interface Stats { average: number; p50: number; p99: number; total: number }
    interface Result { requests: Stats; latency: Stats; throughput: Stats; errors: number; non2xx: number }
    interface Options { url: string; connections?: number; duration?: number; pipelining?: number }
  }
  function autocannon(opts: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}
