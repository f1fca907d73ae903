/**
 * NVIDIA's management library (NVML) through koffi: per card its name, memory used/total, utilisation,
 * temperature and power. `openNvml` returns null when the library is not on the machine (no NVIDIA
 * driver): callers treat that as "no NVML", never as an error. Cards are in NVML's order (PCI bus).
 */
import koffi, { type LibraryHandle } from 'koffi';
import { bindFunctions, defineTypeOnce, type Prototypes } from './koffi-bind.js';

const NVML_SUCCESS = 0;
const NVML_TEMPERATURE_GPU = 0;
const NAME_BYTES = 96;

defineTypeOnce('nvmlDevice_t', (name) => koffi.pointer(name, koffi.opaque()));
defineTypeOnce('nvmlMemory_t', (name) => koffi.struct(name, { total: 'uint64_t', free: 'uint64_t', used: 'uint64_t' }));
defineTypeOnce('nvmlUtilization_t', (name) => koffi.struct(name, { gpu: 'uint32_t', memory: 'uint32_t' }));

type Device = unknown;

interface Nvml {
  nvmlInit_v2(): number;
  nvmlShutdown(): number;
  nvmlErrorString(result: number): string;
  nvmlDeviceGetCount_v2(count: [number]): number;
  nvmlDeviceGetHandleByIndex_v2(index: number, device: [Device]): number;
  nvmlDeviceGetName(device: Device, name: Buffer, length: number): number;
  nvmlDeviceGetMemoryInfo(device: Device, memory: { total?: bigint | number; free?: bigint | number; used?: bigint | number }): number;
  nvmlDeviceGetUtilizationRates(device: Device, utilization: { gpu?: number; memory?: number }): number;
  nvmlDeviceGetTemperature(device: Device, sensor: number, celsius: [number]): number;
  nvmlDeviceGetPowerUsage(device: Device, milliwatts: [number]): number;
}

export const NVML_PROTOTYPES: Prototypes<Nvml> = {
  nvmlInit_v2: 'int nvmlInit_v2()',
  nvmlShutdown: 'int nvmlShutdown()',
  nvmlErrorString: 'const char *nvmlErrorString(int result)',
  nvmlDeviceGetCount_v2: 'int nvmlDeviceGetCount_v2(_Out_ unsigned int *deviceCount)',
  nvmlDeviceGetHandleByIndex_v2: 'int nvmlDeviceGetHandleByIndex_v2(unsigned int index, _Out_ nvmlDevice_t *device)',
  nvmlDeviceGetName: 'int nvmlDeviceGetName(nvmlDevice_t device, _Out_ uint8_t *name, unsigned int length)',
  nvmlDeviceGetMemoryInfo: 'int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, _Out_ nvmlMemory_t *memory)',
  nvmlDeviceGetUtilizationRates: 'int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, _Out_ nvmlUtilization_t *utilization)',
  nvmlDeviceGetTemperature: 'int nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType, _Out_ unsigned int *temp)',
  nvmlDeviceGetPowerUsage: 'int nvmlDeviceGetPowerUsage(nvmlDevice_t device, _Out_ unsigned int *power)',
};

/** One card as NVML reports it; a figure the card does not report is null. */
export interface NvmlCard {
  index: number;
  name: string;
  memoryUsedBytes: number;
  memoryTotalBytes: number;
  /** Percent of the last sample period the card was busy. */
  utilizationPercent: number | null;
  temperatureC: number | null;
  powerW: number | null;
}

export interface NvmlSession {
  cards(): NvmlCard[];
  close(): void;
}

export function defaultNvmlLibrary(): string {
  return process.platform === 'win32' ? 'nvml.dll' : 'libnvidia-ml.so.1';
}

/** Loads and initialises NVML; null when the library cannot be loaded. Throws when it loads but fails to start. */
export function openNvml(libraryPath: string = defaultNvmlLibrary()): NvmlSession | null {
  let library: LibraryHandle;
  try {
    library = koffi.load(libraryPath);
  } catch {
    return null;
  }
  const nvml = bindFunctions<Nvml>(library, NVML_PROTOTYPES);
  const check = (what: string, result: number): void => {
    if (result !== NVML_SUCCESS) throw new Error(`NVML ${what} failed: ${nvml.nvmlErrorString(result)} (${result})`);
  };
  check('init', nvml.nvmlInit_v2());
  const optional = (result: number, value: number): number | null => (result === NVML_SUCCESS ? value : null);
  return {
    cards: () => {
      const count: [number] = [0];
      check('device count', nvml.nvmlDeviceGetCount_v2(count));
      return Array.from({ length: count[0] }, (_, index): NvmlCard => {
        const device: [Device] = [null];
        check(`handle of card ${index}`, nvml.nvmlDeviceGetHandleByIndex_v2(index, device));
        const nameBytes = Buffer.alloc(NAME_BYTES);
        check(`name of card ${index}`, nvml.nvmlDeviceGetName(device[0], nameBytes, NAME_BYTES));
        const memory: { total?: bigint | number; used?: bigint | number } = {};
        check(`memory of card ${index}`, nvml.nvmlDeviceGetMemoryInfo(device[0], memory));
        const utilization: { gpu?: number } = {};
        const utilizationResult = nvml.nvmlDeviceGetUtilizationRates(device[0], utilization);
        const temperature: [number] = [0];
        const temperatureResult = nvml.nvmlDeviceGetTemperature(device[0], NVML_TEMPERATURE_GPU, temperature);
        const power: [number] = [0];
        const powerResult = nvml.nvmlDeviceGetPowerUsage(device[0], power);
        const milliwatts = optional(powerResult, power[0]);
        return {
          index,
          name: nameBytes.toString('utf8', 0, nameBytes.includes(0) ? nameBytes.indexOf(0) : NAME_BYTES),
          memoryUsedBytes: Number(memory.used ?? 0),
          memoryTotalBytes: Number(memory.total ?? 0),
          utilizationPercent: optional(utilizationResult, utilization.gpu ?? 0),
          temperatureC: optional(temperatureResult, temperature[0]),
          powerW: milliwatts === null ? null : milliwatts / 1000,
        };
      });
    },
    close: () => {
      nvml.nvmlShutdown();
      library.unload();
    },
  };
}
