import asciichart from 'asciichart';

export interface DayPoint {
  date: string;
  value: number;
}

export interface ChartOptions {
  /** Terminal columns available for the whole chart, labels included. */
  width: number;
  /** Rows of the plot area; fixed so charts line up whatever the data. */
  height?: number;
}

const LABEL_WIDTH = 7;

/** Sums consecutive days into buckets so that at most `slots` points remain. */
export function bucket(points: readonly DayPoint[], slots: number): { size: number; points: DayPoint[] } {
  const size = Math.max(1, Math.ceil(points.length / Math.max(1, slots)));
  const out: DayPoint[] = [];
  for (let i = 0; i < points.length; i += size) {
    const group = points.slice(i, i + size);
    out.push({ date: group[0]!.date, value: group.reduce((sum, p) => sum + p.value, 0) });
  }
  return { size, points: out };
}

/** 1234567 -> "1.2M": y labels must fit LABEL_WIDTH. */
export function compact(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${+(n / 1e9).toFixed(1)}B`;
  if (abs >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (abs >= 1e4) return `${+(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

/**
 * A line chart of one daily series: y labels on the left, `MM-DD` dates under the x axis at
 * the first and last point and evenly between. Long windows are bucketed (days summed) to
 * fit `width`; short ones are stretched so a week still fills the line.
 */
export function dailyChart(points: readonly DayPoint[], opts: ChartOptions): { text: string; bucketDays: number } {
  if (points.length === 0) return { text: '', bucketDays: 1 };
  const height = opts.height ?? 8;
  // Layout of asciichart with offset 3: label, a space, the axis, then one column per value
  // after the first (the first sits on the axis).
  const slots = Math.max(2, opts.width - LABEL_WIDTH - 2);
  const { size, points: series } = bucket(points, slots);
  const stretch = Math.max(1, Math.min(8, Math.floor((slots - 1) / series.length)));
  const values = series.flatMap((p) => Array<number>(stretch).fill(p.value));
  const top = Math.max(...values);
  const plot = asciichart.plot(values, {
    height,
    offset: 3,
    // From zero, and at least `height` high so small counts get whole-number labels.
    min: 0,
    max: Math.max(top, height),
    format: (x: number) => compact(x).padStart(LABEL_WIDTH),
  });
  const lines = plot.split('\n').map((l) => l.trimEnd());
  lines.push(dateAxis(series.map((p) => p.date), LABEL_WIDTH + 1, stretch));
  return { text: lines.join('\n'), bucketDays: size };
}

/** Dates under their points; labels that would touch a neighbour are left out. */
function dateAxis(dates: readonly string[], origin: number, stretch: number): string {
  const labels = dates.map((d) => d.slice(5)); // MM-DD
  const width = origin + dates.length * stretch + 3;
  const line = Array<string>(width).fill(' ');
  const put = (i: number) => {
    const label = labels[i]!;
    const start = Math.min(Math.max(0, origin + i * stretch - 2), width - label.length);
    if (line.slice(Math.max(0, start - 1), start + label.length + 1).some((c) => c !== ' ')) return;
    for (let k = 0; k < label.length; k++) line[start + k] = label[k]!;
  };
  put(0);
  put(dates.length - 1);
  const every = Math.max(1, Math.ceil(8 / stretch));
  for (let i = every; i < dates.length - 1; i += every) put(i);
  return line.join('').trimEnd();
}
