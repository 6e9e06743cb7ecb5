import { Option } from 'commander';

/** `--days 7|30|90`: the windows the usage routes accept. */
export const daysOption = () => new Option('--days <n>', 'window in days').choices(['7', '30', '90']).default('30');
export const chartOption = () => new Option('--chart', 'draw requests and credits per day');
export const yesOption = () => new Option('-y, --yes', 'do not ask for confirmation (needed in scripts)');
/** Address Watch event types, as `events --type` and `webhook test --type` accept them. */
export const eventTypeOption = (description: string) => new Option('--type <type>', description).choices(['payment', 'payout', 'other', 'block']);
