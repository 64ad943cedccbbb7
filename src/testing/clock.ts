/** Starts at the fixture's "now" (2026-11-01) and moves 1 ms forward on every read, like a real clock. */
export class TestClock {
  static readonly START = 1_793_491_200;
  private t = TestClock.START;
  readonly now = (): number => {
    this.t = Math.round((this.t + 0.001) * 1e6) / 1e6;
    return this.t;
  };
  set(epochSeconds: number): void {
    this.t = epochSeconds;
  }
  advance(seconds: number): void {
    this.t += seconds;
  }
  /** The current reading without moving the clock. */
  peek(): number {
    return this.t;
  }
  reset(): void {
    this.t = TestClock.START;
  }
}
