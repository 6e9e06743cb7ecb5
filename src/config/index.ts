export { loadConfig, parseConfig, findConfigFile, defaultDataDir, ConfigError } from './load.js';
export type { Config, ConfigInput, NetworkConfig, EnvironmentConfig, PlanConfig, IntegrityPolicyConfig } from './schema.js';
export { defaultNetworks, defaultPlans } from './defaults.js';
export { secretsFromFiles, SECRET_FIELDS, SECRET_VARIABLES } from './env.js';
