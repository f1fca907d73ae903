/** Choosing llama-server's archive from a llama.cpp release (pure logic, release JSON written here). */
import { describe, expect, it } from 'vitest';
import { chooseReleaseAsset, type Release } from '../../core/llama-server/release-asset.js';

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;
const release: Release = {
  tag_name: 'b7000',
  assets: [
    'llama-b7000-bin-ubuntu-x64.zip',
    'llama-b7000-bin-ubuntu-x64.tar.gz',
    'llama-b7000-bin-ubuntu-vulkan-x64.tar.gz',
    'llama-b7000-bin-win-cpu-x64.zip',
    'llama-b7000-bin-win-cuda-12.4-x64.zip',
    'llama-b7000-bin-win-cuda-13.1-x64.zip',
    'cudart-llama-bin-win-cuda-13.1-x64.zip',
    'llama-b7000-bin-macos-arm64.zip',
    'llama-b7000-xcframework.zip',
  ].map((name, i) => ({ name, browser_download_url: `https://example.test/${name}`, size: 1, digest: digest(i + 1) })),
};
const names = (choice: ReturnType<typeof chooseReleaseAsset>) => [choice.archive.asset.name, ...choice.extras.map((e) => e.asset.name)];

describe('llama.cpp release asset choice', () => {
  it('picks the platform, architecture and backend build, preferring .tar.gz, the newest CUDA with its runtime', () => {
    expect(names(chooseReleaseAsset(release, 'linux', 'x64', 'cpu'))).toEqual(['llama-b7000-bin-ubuntu-x64.tar.gz']);
    expect(names(chooseReleaseAsset(release, 'linux', 'x64', 'vulkan'))).toEqual(['llama-b7000-bin-ubuntu-vulkan-x64.tar.gz']);
    expect(names(chooseReleaseAsset(release, 'win32', 'x64', 'cpu'))).toEqual(['llama-b7000-bin-win-cpu-x64.zip']);
    expect(names(chooseReleaseAsset(release, 'win32', 'x64', 'cuda'))).toEqual([
      'llama-b7000-bin-win-cuda-13.1-x64.zip',
      'cudart-llama-bin-win-cuda-13.1-x64.zip',
    ]);
    expect(names(chooseReleaseAsset(release, 'darwin', 'arm64', 'metal'))).toEqual(['llama-b7000-bin-macos-arm64.zip']);
    expect(chooseReleaseAsset(release, 'linux', 'x64', 'cpu').archive.sha256).toBe(digest(2).slice('sha256:'.length));
  });

  it('names what the release has when it has no such build, and refuses platforms llama.cpp does not build for', () => {
    expect(() => chooseReleaseAsset(release, 'linux', 'arm64', 'cpu')).toThrow(
      'llama.cpp release b7000 has no cpu build of llama-server for linux arm64 (its builds: macos-arm64, ubuntu-vulkan-x64, ubuntu-x64, win-cpu-x64, win-cuda-12.4-x64, win-cuda-13.1-x64)',
    );
    expect(() => chooseReleaseAsset(release, 'darwin', 'arm64', 'cuda')).toThrow(/no cuda build of llama-server for darwin arm64/);
    expect(() => chooseReleaseAsset(release, 'freebsd', 'x64', 'cpu')).toThrow('llama.cpp publishes no llama-server build for freebsd');
  });

  it('refuses a CUDA build whose runtime is missing, and an asset without a digest', () => {
    const noRuntime = { ...release, assets: release.assets.filter((a) => !a.name.startsWith('cudart')) };
    expect(() => chooseReleaseAsset(noRuntime, 'win32', 'x64', 'cuda')).toThrow(
      'has win-cuda-13.1-x64 but not its CUDA runtime (cudart-llama-bin-win-cuda-13.1-x64.zip)',
    );
    const undigested = { ...release, assets: release.assets.map((a) => ({ ...a, digest: null })) };
    expect(() => chooseReleaseAsset(undigested, 'linux', 'x64', 'cpu')).toThrow(
      'llama-b7000-bin-ubuntu-x64.tar.gz has no SHA-256 digest in the release, so it cannot be verified',
    );
  });
});
