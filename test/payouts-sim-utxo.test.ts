import { payoutsSim } from './sim/suites.js';

// Payout lines on a simulated utxo chain through reorgs (test/sim/suites.ts, test/sim/payouts.ts).
payoutsSim('utxo');
