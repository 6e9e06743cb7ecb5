/** Kept apart from program.ts so implementation modules can name the version cheaply. */
export const VERSION = '0.1.0';
