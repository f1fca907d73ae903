/** Electron Forge configuration: `npm start` (electron-forge start) and packaging of the desktop app. */
const config = {
  packagerConfig: { name: 'Manifold', asar: { unpack: '**/node_modules/{node-llama-cpp,@node-llama-cpp,koffi}/**' } },
  makers: [],
};

export default config;
