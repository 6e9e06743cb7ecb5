import { paymentsSim } from './sim/suites.js';

// Payment orders on a simulated tron chain against the reference model (test/sim/suites.ts).
paymentsSim('tron');
