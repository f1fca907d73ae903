#!/bin/bash
# Packs what `bench gpu` needs on a bare GPU machine without Node or a network into .gpu/ (git-ignored, ~45 MB):
# this Node binary and the node_modules packages the benchmark loads (packages.txt: the engine and tokenizer
# children, the front, tsx; node-llama-cpp's Vulkan build instead of its CUDA one, which is 124 MB), both xz-compressed,
# plus Debian's Vulkan loader in .gl/. Copy the repository with .gpu and .gl there and run bench/gpu-machine/run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu .gl
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo '/.gl/' >> .git/info/exclude
tar -C node_modules --exclude='node-llama-cpp/llama/gitRelease.bundle' --exclude='*.d.ts' --exclude='*.d.mts' --exclude='*.d.cts' \
  --exclude='*.map' --exclude='openai/src' --exclude='*.md' -cf - $(cat bench/gpu-machine/packages.txt) | xz -9 -T0 > .gpu/node_modules.tar.xz
xz -9 -T0 -c "$(command -v node)" > .gpu/node.xz
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
mkdir -p /tmp/amd64/partial && apt-get $o update >/dev/null && (cd .gl && apt-get $o download libvulkan1)
du -sh .gpu .gl
