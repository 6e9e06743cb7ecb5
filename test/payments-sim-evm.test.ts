import { paymentsSim } from './sim/suites.js';

// Payment orders on a simulated evm chain against the reference model (test/sim/suites.ts).
paymentsSim('evm');
