import { payoutsSim } from './sim/suites.js';

// Payout lines on a simulated evm chain through reorgs (test/sim/suites.ts, test/sim/payouts.ts).
payoutsSim('evm');
