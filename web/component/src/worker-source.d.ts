// The worker's bundled source, which build.mjs puts in the component's bundle as a string.
declare module "otpgate:worker" {
  const source: string;
  export default source;
}
