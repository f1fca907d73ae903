import { getLlama } from 'node-llama-cpp';
const llama = await getLlama({ gpu: 'auto', build: 'never' });
console.log('backend', llama.gpu, await llama.getGpuDeviceNames(), JSON.stringify(await llama.getVramState()));
await llama.dispose();
