import { paymentsSim } from './sim/suites.js';

// Payment orders on a simulated stellar chain against the reference model (test/sim/suites.ts).
paymentsSim('stellar');
