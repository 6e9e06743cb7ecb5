import { Option } from 'commander';

/** `--days 7|30|90`: the windows the usage routes accept. */
export const daysOption = () => new Option('--days <n>', 'window in days').choices(['7', '30', '90']).default('30');
export const chartOption = () => new Option('--chart', 'draw requests and credits per day');
export const yesOption = () => new Option('-y, --yes', 'do not ask for confirmation (needed in scripts)');
