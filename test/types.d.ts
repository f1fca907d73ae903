/** Types for test-only packages that ship none. */
declare module 'parse-prometheus-text-format' {
  interface Metric {
    value?: string;
    labels?: Record<string, string>;
  }
  interface MetricFamily {
    name: string;
    help: string;
    type: string;
    metrics: Metric[];
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
