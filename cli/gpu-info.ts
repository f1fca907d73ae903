/**
 * `npm run gpu-info`: each card's name, memory and utilisation, read by the same code the dashboard
 * and `/metrics` use (NVML; `MANIFOLD_NVML_LIBRARY` points at another copy of the library). Without
 * NVML it says "no GPU" and why, and exits 0: a machine without a GPU is not an error.
 */
import { describeCard, GpuMonitor } from '../core/gpu/gpu-report.js';

const monitor = new GpuMonitor();
try {
  const report = monitor.report();
  console.log(report.note);
  for (const card of report.cards) console.log(describeCard(card));
} finally {
  monitor.close();
}
