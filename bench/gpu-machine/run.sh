#!/bin/bash
# `bench gpu` on a bare GPU machine (after pack.sh, run from the repository's copy there as root): unpacks Node, the
# packed node_modules and the Vulkan loader, measures the card's device-to-device copy bandwidth (PyTorch, where the
# machine has it; else 4300 GB/s, an H200's), then runs the benchmark. Its output and JSON land in $OUT.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
T0=$(date +%s); log() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
{
log "unpack"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
mkdir -p /tmp/nodebin
python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('.gpu/node.xz'), open('/tmp/nodebin/node','wb'))" && chmod +x /tmp/nodebin/node
export PATH=/tmp/nodebin:$PATH
rm -rf node_modules && mkdir -p node_modules
if command -v xz >/dev/null; then tar -C node_modules -xJf .gpu/node_modules.tar.xz; else python3 -c "import tarfile; tarfile.open('.gpu/node_modules.tar.xz').extractall('node_modules', filter='tar')"; fi
node -v; nproc; free -g | head -2
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory,clocks.max.sm,driver_version --format=csv
ls "$VK_DRIVER_FILES" || ls /usr/local/nvidia/share/vulkan/icd.d/ /usr/share/vulkan/icd.d/ 2>&1
log "bandwidth"
BW=$(timeout 60 python3 - <<'PY'
import torch
n = 2**30
a = torch.empty(n, dtype=torch.float32, device='cuda'); b = torch.empty_like(a)
for _ in range(3): b.copy_(a)
torch.cuda.synchronize()
e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
e0.record()
for _ in range(20): b.copy_(a)
e1.record(); torch.cuda.synchronize()
ms = e0.elapsed_time(e1) / 20
print(round(2 * 4 * n / (ms / 1000) / 1e9))
PY
)
echo "device-to-device copy: ${BW:-?} GB/s (read + write)"
BW=${BW:-4300}
log "probe"
timeout 60 node bench/gpu-machine/probe.mjs
log "bench gpu"
MANIFOLD_ENGINE_KIND=node-llama-cpp timeout ${BENCH_TIMEOUT:-420} node --expose-gc --import ./node_modules/tsx/dist/loader.mjs bench/run.ts gpu ${BENCH_ARGS:-} --bandwidth-gbps "$BW"
echo "bench exit $?"
cp bench/results/gpu*.json "$OUT/" 2>/dev/null
log "done"
} 2>&1 | tee "$OUT/log.txt"
