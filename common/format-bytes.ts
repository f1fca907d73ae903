/** Byte counts for people: binary units with one decimal, the exact count kept alongside where it matters. */

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

export function formatBytes(bytes: number): string {
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${bytes < 0 ? '-' : ''}${unit === 0 ? value : value.toFixed(1)} ${UNITS[unit]}`;
}
