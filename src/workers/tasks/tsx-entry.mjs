// Piscina workers cannot load TypeScript on Node 20 even under tsx: when the gateway runs from
// source (tests, development), this entry registers tsx in the worker, then forwards each task
// to the module the pool names in its workerData. Compiled runs load the .js directly.
import { register } from 'tsx/esm/api';
import { workerData } from 'piscina';

register();
const loaded = import(workerData.module);

export default async function run(task) {
  return (await loaded).default(task);
}
