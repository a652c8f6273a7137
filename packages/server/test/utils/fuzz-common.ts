import fc from 'fast-check';

/**
 * `arb` in about `percent` % of the runs, else `undefined`. `fc.option` cannot make a member rare,
 * and a request with every odd member at once is refused at the first one: the fuzz would never
 * get past the front door.
 */
export function sometimes<T>(arb: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary: arb });
}

type Members<T> = { [K in keyof T]: readonly [fc.Arbitrary<T[K]>, number] };

/** An object whose members are each present in their own share of the runs (in %). */
export function partialRecord<T extends Record<string, unknown>>(members: Members<T>): fc.Arbitrary<Partial<T>> {
  const keys = Object.keys(members) as Array<keyof T & string>;
  return fc.tuple(...keys.map((key) => sometimes(members[key][0], members[key][1]))).map((values) => {
    const out: Partial<T> = {};
    keys.forEach((key, i) => {
      if (values[i] !== undefined) out[key] = values[i] as T[typeof key];
    });
    return out;
  });
}

/**
 * How often each kind of outcome came up, printed at the end when `FUZZ_STATS` is set: a property
 * whose runs all stop at the front door (401, parse errors) passes without testing much, and only
 * this shows it.
 */
export interface Tally {
  count(property: string, outcome: string): void;
  print(): void;
}

export function createTally(enabled: boolean): Tally {
  const counts = new Map<string, number>();
  return {
    count(property, outcome) {
      if (!enabled) return;
      const key = `${property}\t${outcome}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    },
    print() {
      if (!enabled) return;
      const lines = [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, n]) => `${String(n).padStart(6)}  ${key}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    },
  };
}
