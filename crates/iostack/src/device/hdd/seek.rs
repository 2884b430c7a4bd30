//! The seek curve (Ruemmler and Wilkes; see the module comment of `hdd`) and its fit to a
//! datasheet's three figures.

/// The fitted seek curve (times in ns).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SeekCurve {
    pub t2t_ns: f64,
    /// Coefficient of sqrt(d - 1), ns.
    pub a: f64,
    /// Distance where the curve turns linear, cylinders.
    pub knee: f64,
    /// Slope of the linear part, ns per cylinder.
    pub slope: f64,
    /// Longest seek, cylinders.
    pub max_d: u64,
    /// `seek(knee)`, kept so the linear part costs no square root.
    #[serde(skip)]
    at_knee_ns: f64,
}

/// The fractional part of a non-negative `x` below 2^63: `x.fract()` without the call to
/// `trunc` that baseline x86-64 makes (the integer conversion truncates exactly the same).
#[inline]
pub(super) fn fract(x: f64) -> f64 {
    debug_assert!((0.0..9.2e18).contains(&x));
    x - (x as i64) as f64
}

/// `x as f64` for a count below 2^63 (sectors, cylinders, ns): the same value, converted through
/// `i64`, which baseline x86-64 does in one instruction (the `u64` conversion takes several).
#[inline]
pub(super) fn to_f64(x: u64) -> f64 {
    debug_assert!(x < 1 << 63);
    x as i64 as f64
}

impl SeekCurve {
    pub fn time_ns(&self, d: u64) -> f64 {
        if d == 0 {
            return 0.0;
        }
        let x = to_f64(d);
        if x <= self.knee {
            self.t2t_ns + self.a * (x - 1.0).sqrt()
        } else {
            self.at_knee_ns + self.slope * (x - self.knee)
        }
    }

    fn with_knee(t2t: f64, full: f64, max_d: u64, knee: f64) -> SeekCurve {
        let m = max_d as f64;
        let r = (knee - 1.0).sqrt().max(1e-9);
        let a = (full - t2t) / (r + (m - knee) / (2.0 * r));
        SeekCurve { t2t_ns: t2t, a, knee, slope: a / (2.0 * r), max_d, at_knee_ns: t2t + a * (knee - 1.0).sqrt() }
    }

    /// Mean seek time over distances 1..=max_d weighted by (max_d + 1 - d), the datasheet average.
    pub fn weighted_mean_ns(&self) -> f64 {
        self.weighted_mean_over(&SeekSamples::new(self.max_d))
    }

    /// [`SeekCurve::weighted_mean_ns`] over samples of this curve's `max_d`: the sum of
    /// `time_ns` at each, in order, with the square roots the samples hold.
    fn weighted_mean_over(&self, samples: &SeekSamples) -> f64 {
        debug_assert_eq!(samples.max_d, self.max_d);
        let (mut num, mut den) = (0.0, 0.0);
        for s in &samples.points {
            // `time_ns` at the sample's distance `x` (at least 1), its square root precomputed.
            let t = if s.x <= self.knee { self.t2t_ns + self.a * s.root } else { self.at_knee_ns + self.slope * (s.x - self.knee) };
            num += s.w * t;
            den += s.w;
        }
        num / den
    }

    /// Fits the curve through track-to-track, average and full-stroke times for `cylinders`.
    pub fn fit(t2t_ns: f64, avg_ns: f64, full_ns: f64, cylinders: u64) -> Result<SeekCurve, String> {
        let max_d = cylinders.saturating_sub(1).max(2);
        if !(t2t_ns < avg_ns && avg_ns < full_ns) {
            return Err(format!(
                "seek times must satisfy track-to-track < average < full stroke (got {} < {} < {} ms)",
                t2t_ns / 1e6,
                avg_ns / 1e6,
                full_ns / 1e6
            ));
        }
        // The distances sampled do not depend on the curve: take them, and their square roots,
        // once for the whole fit.
        let samples = SeekSamples::new(max_d);
        let lo_curve = Self::with_knee(t2t_ns, full_ns, max_d, 2.0);
        let hi_curve = Self::with_knee(t2t_ns, full_ns, max_d, max_d as f64);
        let (lo, hi) = (lo_curve.weighted_mean_over(&samples), hi_curve.weighted_mean_over(&samples));
        if avg_ns < lo - 1.0 || avg_ns > hi + 1.0 {
            return Err(format!(
                "no sqrt-then-linear seek curve from {} ms (track-to-track) to {} ms (full stroke) has a {} ms average; \
                 the average must lie between {:.2} and {:.2} ms",
                t2t_ns / 1e6,
                full_ns / 1e6,
                avg_ns / 1e6,
                lo / 1e6,
                hi / 1e6
            ));
        }
        let (mut a, mut b) = (2.0, max_d as f64);
        for _ in 0..80 {
            let mid = 0.5 * (a + b);
            let at_end = mid == a || mid == b;
            if Self::with_knee(t2t_ns, full_ns, max_d, mid).weighted_mean_over(&samples) < avg_ns {
                a = mid;
            } else {
                b = mid;
            }
            // Once the midpoint is an end of the interval (a and b adjacent or equal floats),
            // this step's update leaves a state that every later step maps to itself: stop.
            if at_end {
                break;
            }
        }
        Ok(Self::with_knee(t2t_ns, full_ns, max_d, 0.5 * (a + b)))
    }
}

/// The seek distances the datasheet average is taken over: at most about 20,000, each standing
/// for `step` neighbouring distances and weighted by how many cylinder pairs are that far apart.
struct SeekSamples {
    max_d: u64,
    points: Vec<SeekSample>,
}

struct SeekSample {
    x: f64,
    /// `(x - 1).sqrt()`.
    root: f64,
    w: f64,
}

impl SeekSamples {
    fn new(m: u64) -> SeekSamples {
        let step = (m / 20_000).max(1);
        let mut points = Vec::with_capacity((m / step + 1) as usize);
        let mut d = 1;
        while d <= m {
            let hi = (d + step - 1).min(m);
            let mid = (d + hi) / 2;
            let n = (hi - d + 1) as f64;
            let x = to_f64(mid);
            points.push(SeekSample { x, root: (x - 1.0).sqrt(), w: (m + 1 - mid) as f64 * n });
            d = hi + 1;
        }
        SeekSamples { max_d: m, points }
    }
}
