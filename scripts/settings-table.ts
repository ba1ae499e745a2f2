import { groups, settings, startHere, toFlag } from '../src/config.js';

/** The README's generated part lies between these two lines; the text around it is written by hand. */
const START_MARKER = '<!-- settings:start: generated from src/config.ts by `npm run docs:settings`, do not edit -->';
const END_MARKER = '<!-- settings:end -->';

export const README = new URL('../README.md', import.meta.url);

type Setting = (typeof settings)[keyof typeof settings];

/** `readme` with its settings section rendered again from the groups in src/config.ts. */
export function withSettingsTables(readme: string): string {
  const start = readme.indexOf(START_MARKER);
  const end = readme.indexOf(END_MARKER);
  if (start === -1 || end < start)
    throw new Error(`README.md needs the lines ${START_MARKER} and ${END_MARKER}, in that order`);
  return `${readme.slice(0, start + START_MARKER.length)}\n\n${settingsTables()}\n\n${readme.slice(end)}`;
}

/** What most deployments set, then each group's other settings. */
export function settingsTables(): string {
  const first = new Set<string>(startHere);
  const sections = [
    `### Start here\n\nWhat a deployment usually sets; every other setting has a default that fits one machine.\n\n${table(startHere.map((key) => settings[key]))}`,
    ...Object.values(groups).map((group) => {
      const entries = Object.entries(group.settings) as [string, Setting][];
      const shownFirst = entries.filter(([key]) => first.has(key)).map(([, setting]) => `\`${setting.env}\``);
      const rest = entries.filter(([key]) => !first.has(key)).map(([, setting]) => setting);
      const pointer =
        shownFirst.length === 0
          ? []
          : [`${rest.length === 0 ? 'All' : 'Also'} in [Start here](#start-here): ${shownFirst.join(', ')}.`];
      return [`### ${group.title}`, group.about, ...pointer, ...(rest.length === 0 ? [] : [table(rest)])].join('\n\n');
    }),
  ];
  return sections.join('\n\n');
}

function table(rows: Setting[]): string {
  const lines = rows.map(
    (setting) =>
      `| \`${setting.env}\` | \`--${toFlag(setting.env)}\` | ${cell(shownDefault(setting))} | ${cell(setting.doc)} |`,
  );
  return ['| env | flag | default | meaning |', '|---|---|---|---|', ...lines].join('\n');
}

/** The default as the process starts with it alone, and how it follows other settings. */
function shownDefault(setting: Setting): string {
  const plain = plainDefault(setting.env, setting.schema.parse(undefined));
  return 'defaultFollows' in setting ? `${plain}, ${setting.defaultFollows}` : plain;
}

function plainDefault(env: string, value: unknown): string {
  if (value === undefined) return 'unset';
  if (Array.isArray(value) && value.length === 0) return 'empty';
  if (typeof value !== 'number') return `\`${String(value)}\``;
  const unit = /_BYTES(_|$)/.test(env)
    ? inUnits(value, BYTE_UNITS)
    : /_MS$/.test(env)
      ? inUnits(value, TIME_UNITS)
      : undefined;
  return unit === undefined ? `\`${value}\`` : `\`${value}\` (${unit})`;
}

const BYTE_UNITS: [number, string][] = [
  [1024 ** 3, 'GiB'],
  [1024 ** 2, 'MiB'],
  [1024, 'KiB'],
];
const TIME_UNITS: [number, string][] = [
  [24 * 60 * 60 * 1000, 'days'],
  [60 * 60 * 1000, 'h'],
];

/** `65536` -> `64 KiB`: in the largest unit it is a whole number of, or undefined when none. */
function inUnits(value: number, units: [number, string][]): string | undefined {
  const fitting = units.find(([size]) => value >= size && value % size === 0);
  if (fitting === undefined) return undefined;
  const [size, name] = fitting;
  const count = value / size;
  return `${count} ${count === 1 && name === 'days' ? 'day' : name}`;
}

/** A table cell: a `|` would end it. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}
