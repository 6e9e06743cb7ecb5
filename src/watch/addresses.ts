// Where the watch and the payments take an address from: the environment's family checks it.
export { parseAddress } from '../chains/index.js';
