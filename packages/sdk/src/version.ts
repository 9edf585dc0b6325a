/** The package's version, written here by scripts/build.js from package.json, so no runtime reads a file for it. */
export const SDK_VERSION: string = '0.1.0'
