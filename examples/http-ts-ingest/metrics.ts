import type { StreamTable } from '@media-core/sdk';
import type { MetricCollector } from '@media-core/plugins/metrics/api';

/**
 * The plugin's figures for the metrics plugin (`GET /api/v3/metrics`, `/metrics`): read from
 * the service's stream table, nothing counted twice.
 */
export function httpTsMetrics(streams: StreamTable): MetricCollector {
  return {
    describe: () => [
      { name: 'httpts_streams', description: 'HTTP MPEG-TS streams being published now', labels: [] },
      { name: 'httpts_rx_bytes', description: 'Bytes received from the publisher of a live stream', labels: ['stream'] },
      { name: 'httpts_readers', description: 'Processes reading a live stream', labels: ['stream'] },
    ],
    collect: () => {
      const live = streams.list('httpts');
      return [
        { name: 'httpts_streams', labels: {}, value: live.length },
        ...live.map((s) => ({ name: 'httpts_rx_bytes', labels: { stream: s.name }, value: s.publisher.traffic().rxBytes })),
        ...live.map((s) => ({ name: 'httpts_readers', labels: { stream: s.name }, value: s.readers.length })),
      ];
    },
  };
}
