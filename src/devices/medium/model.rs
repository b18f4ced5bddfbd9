//! The seek-distance disk model: what a request would cost on a rotating disk.
//!
//! Pure arithmetic, no I/O and no host clock. The model keeps its own clock: the time
//! its medium has been busy, the sum of the charges so far. A request arrives when the
//! one before it completes, whatever the host did in between, so the charge of a stream of
//! requests depends on the stream alone, never on the host's speed. The FUSE server
//! ([`super::serve`]) sleeps each request's charge; tests replay offsets through it.
//!
//! A request that does not continue where the previous one ended costs
//! - a **seek** that grows with the distance: `settle + (full − settle) · √(d / D)` for a
//!   distance of `d` bytes on a device of `D` bytes (the whole device is one full stroke;
//!   the usual short-seek curve of Ruemmler & Wilkes, "An introduction to disk drive
//!   modeling", IEEE Computer 1994, without its long-seek linear part). `settle` is derived
//!   so that the average over uniformly random pairs of positions, `E[√u] = 8/15` for the
//!   triangular distance distribution, is exactly `seek_avg_ms`;
//! - the **rotational latency**: its expectation, half a rotation (the model has no
//!   angular position; every non-sequential request waits exactly half a turn);
//! - the **transfer** at the media rate (one rate for the whole device: no zones).
//!
//! A request that starts where the previous one ended pays the transfer only. With a
//! track buffer (`cache_mb > 0`) the drive keeps the last read's data and would go on
//! reading ahead from where it ended, at the media rate, up to the buffer's size. The
//! read-ahead advances in model time only, and model time passes only while requests are
//! served, so it is never ahead of the next request: what the buffer gives is a read of
//! the last read's data again at no cost, and a short forward skip read through (the
//! skipped bytes at the media rate) when that is cheaper than a seek and half a turn. A
//! request that does neither aborts the read-ahead at once, as a drive's adaptive
//! prefetch does: it pays the seek from where the last read ended, and nothing more.
//! Writes are charged like reads and are never cached (write-through: no write-back
//! cache is modelled); they end the read-ahead.

pub use crate::spec::media::{DiskParams, Medium, ModelError, NamedMedium, MEAN_SQRT_DISTANCE};

/// Read or write: the model charges both alike; only reads are served from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The read-ahead stream after a read: the buffer holds `[low, high)` (the last read's
/// data), the head is at `high`, and the drive would read on to `limit` (the buffer's size).
#[derive(Debug, Clone, Copy)]
struct Stream {
    low: u64,
    high: u64,
    limit: u64,
}

/// What one request cost, for tests and traces.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Charge {
    pub seek_s: f64,
    pub rotation_s: f64,
    pub transfer_s: f64,
    /// Served (at least partly) from the read-ahead buffer.
    pub buffered: bool,
}

impl Charge {
    pub fn service_s(&self) -> f64 {
        self.seek_s + self.rotation_s + self.transfer_s
    }
}

/// One modelled disk of `capacity` bytes (the full stroke).
#[derive(Debug, Clone)]
pub struct DiskModel {
    params: DiskParams,
    capacity: u64,
    settle_ms: f64,
    /// Where the head is (the byte after the last request).
    head: u64,
    /// The model's clock: seconds of service charged so far.
    clock: f64,
    stream: Option<Stream>,
}

impl DiskModel {
    pub fn new(params: DiskParams, capacity: u64) -> Result<DiskModel, ModelError> {
        params.validate()?;
        if capacity == 0 {
            return Err(ModelError::EmptyDevice);
        }
        Ok(DiskModel {
            settle_ms: params.settle_ms().max(0.0),
            params,
            capacity,
            head: 0,
            clock: 0.0,
            stream: None,
        })
    }

    pub fn params(&self) -> &DiskParams {
        &self.params
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The model's clock: the seconds of service charged so far (the time its medium has
    /// been busy). Only [`DiskModel::request`] advances it.
    pub fn clock_s(&self) -> f64 {
        self.clock
    }

    /// The seek time for a head movement of `distance` bytes, in seconds (0 for 0).
    pub fn seek_s(&self, distance: u64) -> f64 {
        if distance == 0 {
            return 0.0;
        }
        let u = (distance as f64 / self.capacity as f64).min(1.0);
        (self.settle_ms + (self.params.seek_full_ms - self.settle_ms) * u.sqrt()) / 1000.0
    }

    /// The transfer time of `len` bytes at the media rate, in seconds.
    pub fn transfer_s(&self, len: u64) -> f64 {
        len as f64 / self.params.bytes_per_s()
    }

    /// The cost of a positioning (seek + half rotation), in seconds, from the head to `to`.
    fn position_s(&self, to: u64) -> (f64, f64) {
        if to == self.head {
            return (0.0, 0.0);
        }
        (
            self.seek_s(to.abs_diff(self.head)),
            self.params.half_rotation_ms() / 1000.0,
        )
    }

    /// Serve one request: what it costs. It arrives when the previous request completes
    /// (on the model's clock) and advances the clock by its cost. Requests are served one
    /// at a time, in order (one head, no reordering).
    pub fn request(&mut self, access: Access, offset: u64, len: u64) -> Charge {
        let end = offset.saturating_add(len);
        let mut charge = Charge::default();
        let through = match (access, self.stream) {
            (Access::Read, Some(s)) => self.read_through(s, offset, end),
            _ => None,
        };
        match through {
            Some((transfer, head)) => {
                charge.transfer_s = transfer;
                charge.buffered = true;
                self.head = head;
            }
            None => {
                let (seek, rot) = self.position_s(offset);
                charge.seek_s = seek;
                charge.rotation_s = rot;
                charge.transfer_s = self.transfer_s(len);
                self.head = end;
            }
        }
        self.clock += charge.service_s();
        let cache = self.params.cache_bytes();
        self.stream = (access == Access::Read && cache > 0).then(|| Stream {
            // The buffer slides as the host consumes it: it keeps the last read's data
            // and what was read through past it.
            low: offset,
            high: self.head,
            limit: end.saturating_add(cache).min(self.capacity),
        });
        charge
    }

    /// A read of `[offset, end)` with the read-ahead stream `s`: its cost, and where the
    /// head is after it, when the buffer serves it (the data is already there, or the
    /// drive reads on to it at the media rate, and that is no dearer than a seek). None
    /// when it takes a seek: the read-ahead is aborted at once.
    fn read_through(&self, s: Stream, offset: u64, end: u64) -> Option<(f64, u64)> {
        if offset < s.low || end > s.limit {
            return None;
        }
        if end <= s.high {
            // In the buffer: no media time; the head stays where the stream is.
            return Some((0.0, s.high));
        }
        // Read on from the stream's end through `end`: the skipped bytes too.
        let through = self.transfer_s(end - s.high);
        if offset <= s.high {
            return Some((through, end));
        }
        let (seek, rot) = self.position_s(offset);
        (through <= seek + rot + self.transfer_s(end - offset)).then_some((through, end))
    }

    /// The model's time for `requests`, from a head at 0: the sum of their charges, the
    /// expectation a test compares with.
    pub fn replay(
        params: DiskParams,
        capacity: u64,
        requests: impl IntoIterator<Item = (Access, u64, u64)>,
    ) -> Result<f64, ModelError> {
        let mut m = DiskModel::new(params, capacity)?;
        for (a, off, len) in requests {
            m.request(a, off, len);
        }
        Ok(m.clock_s())
    }
}

#[cfg(test)]
mod tests {
    use super::{Access, DiskModel, DiskParams, Medium, ModelError, NamedMedium};
    use rand::{Rng, SeedableRng};

    const GB: u64 = 1_000_000_000;

    fn hdd() -> DiskParams {
        NamedMedium::Hdd2008.params().unwrap()
    }

    fn no_cache(p: DiskParams) -> DiskParams {
        DiskParams { cache_mb: 0.0, ..p }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn settle_is_derived_from_average_and_full_stroke() {
        let p = hdd();
        // (15 × 8.5 − 8 × 15) / 7 = 7.5 / 7
        assert!(close(p.settle_ms(), 7.5 / 7.0));
        assert!(close(p.half_rotation_ms(), 30_000.0 / 7200.0));
        let m = DiskModel::new(p, GB).unwrap();
        assert_eq!(m.seek_s(0), 0.0);
        assert!(close(m.seek_s(GB), 0.015));
        assert!(close(m.seek_s(10 * GB), 0.015), "capped at full stroke");
        assert!(close(
            m.seek_s(GB / 4),
            (7.5 / 7.0 + (15.0 - 7.5 / 7.0) * 0.5) / 1000.0
        ));
    }

    #[test]
    fn the_curve_averages_to_the_average_seek_over_random_pairs() {
        // Numerical check of the 8/15 constant: mean of seek over a fine grid of pairs.
        let m = DiskModel::new(hdd(), GB).unwrap();
        let n = 400u64;
        let mut sum = 0.0;
        for i in 0..n {
            for j in 0..n {
                let x = (i * 2 + 1) * GB / (2 * n);
                let y = (j * 2 + 1) * GB / (2 * n);
                sum += m.seek_s(x.abs_diff(y));
            }
        }
        let mean_ms = sum / (n * n) as f64 * 1000.0;
        assert!((mean_ms - 8.5).abs() < 0.05, "{mean_ms}");
    }

    #[test]
    fn seek_grows_with_distance() {
        let m = DiskModel::new(hdd(), GB).unwrap();
        let mut last = 0.0;
        for d in [1, 4096, 1 << 20, 100 << 20, GB / 2, GB] {
            let s = m.seek_s(d);
            assert!(s > last, "{d}: {s} <= {last}");
            last = s;
        }
    }

    #[test]
    fn random_request_costs_seek_rotation_and_transfer() {
        let mut m = DiskModel::new(no_cache(hdd()), GB).unwrap();
        let c = m.request(Access::Read, GB / 2, 4096);
        let expect = m.seek_s(GB / 2) + 30.0 / 7200.0 + 4096.0 / 100e6;
        assert!(close(c.service_s(), expect), "{c:?} {expect}");
        assert!(close(m.clock_s(), expect));
        assert!(!c.buffered);
        // Continuing where it ended: transfer only.
        let c2 = m.request(Access::Read, GB / 2 + 4096, 4096);
        assert!(close(c2.service_s(), 4096.0 / 100e6));
        assert_eq!(c2.seek_s, 0.0);
        assert_eq!(c2.rotation_s, 0.0);
    }

    #[test]
    fn the_clock_is_the_sum_of_the_charges() {
        let mut m = DiskModel::new(hdd(), GB).unwrap();
        let mut sum = 0.0;
        for (a, off) in [
            (Access::Write, GB - 4096),
            (Access::Read, 0),
            (Access::Read, 4096),
            (Access::Write, 4096),
            (Access::Read, GB / 3),
        ] {
            sum += m.request(a, off, 4096).service_s();
            assert!(close(m.clock_s(), sum), "{} {sum}", m.clock_s());
        }
        // Back to back: the second write seeks across the whole device after the first.
        let mut m = DiskModel::new(no_cache(hdd()), GB).unwrap();
        m.request(Access::Write, GB - 4096, 4096);
        let c = m.request(Access::Write, 0, 4096);
        assert!(close(
            c.service_s(),
            m.seek_s(GB) + 30.0 / 7200.0 + 4096.0 / 100e6
        ));
    }

    #[test]
    fn sequential_read_runs_at_the_media_rate_with_or_without_the_buffer() {
        let chunk = 128 * 1024u64;
        let total = 100_000_000u64;
        for p in [hdd(), no_cache(hdd())] {
            let reqs = (0..total / chunk).map(|i| (Access::Read, i * chunk, chunk));
            let t = DiskModel::replay(p, GB, reqs).unwrap();
            let media = (total / chunk * chunk) as f64 / 100e6;
            assert!(
                (t - media).abs() < 1e-6,
                "cache {}: {t} vs {media}",
                p.cache_mb
            );
        }
    }

    #[test]
    fn the_buffer_serves_the_last_read_again_and_never_beats_the_media_rate() {
        let mut m = DiskModel::new(hdd(), GB).unwrap();
        m.request(Access::Read, 0, 65536);
        // The next 64 KiB: the read-ahead is never ahead of the host (model time passes
        // only while requests are served), so it costs its transfer, however long the
        // host took to ask.
        let c2 = m.request(Access::Read, 65536, 65536);
        assert!(c2.buffered);
        assert!(close(c2.service_s(), 65536.0 / 100e6));
        // The same data again: in the buffer, no media time.
        let c3 = m.request(Access::Read, 65536 + 4096, 4096);
        assert!(c3.buffered);
        assert_eq!(c3.service_s(), 0.0);
        // The stream goes on from where the buffer ends, not from the re-read.
        let c4 = m.request(Access::Read, 131072, 65536);
        assert!(c4.buffered);
        assert!(close(c4.service_s(), 65536.0 / 100e6));
        // Beyond the buffer's reach: a real seek.
        let c5 = m.request(Access::Read, 500_000_000, 4096);
        assert!(!c5.buffered);
        assert!(c5.seek_s > 0.0);
    }

    #[test]
    fn a_short_forward_skip_reads_through_when_cheaper_than_a_seek() {
        let mut m = DiskModel::new(hdd(), GB).unwrap();
        m.request(Access::Read, 0, 4096);
        // 40 KB further on: reading through takes 0.4 ms, a seek + half turn ~5 ms.
        let c2 = m.request(Access::Read, 4096 + 40_000, 4096);
        assert!(c2.buffered);
        assert!(close(c2.service_s(), 44_096.0 / 100e6));
        // 20 MB further on (inside the 32 MB window): a seek is cheaper than 200 ms of reading.
        let c3 = m.request(Access::Read, 20_000_000, 4096);
        assert!(!c3.buffered);
    }

    /// A read-ahead in progress never delays a request that goes elsewhere: the request
    /// aborts it, as a 2008 drive's prefetch is aborted by a new command, and pays the seek
    /// from where the last read ended, exactly as with no buffer at all.
    #[test]
    fn a_request_elsewhere_aborts_the_read_ahead_without_delay() {
        let mut with = DiskModel::new(hdd(), GB).unwrap();
        let mut without = DiskModel::new(no_cache(hdd()), GB).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for run in 0..20u64 {
            // A sequential run of 1 MiB in 128 KiB pieces: the drive is reading ahead.
            let base = (run * 48_271 % 997) * (GB / 1000);
            for i in 0..8 {
                let a = with.request(Access::Read, base + i * 131_072, 131_072);
                let b = without.request(Access::Read, base + i * 131_072, 131_072);
                assert!(close(a.service_s(), b.service_s()));
            }
            // Then a read elsewhere (outside the buffer's reach), or a write.
            let head = base + 8 * 131_072;
            let off = loop {
                let off = rng.random_range(0..GB / 4096) * 4096;
                if !(head..head + 32_000_000).contains(&off) {
                    break off;
                }
            };
            let access = if run % 3 == 2 {
                Access::Write
            } else {
                Access::Read
            };
            let a = with.request(access, off, 4096);
            let b = without.request(access, off, 4096);
            assert!(!a.buffered);
            assert_eq!(a, b, "run {run}: with the buffer {a:?}, without {b:?}");
            assert!(close(
                a.service_s(),
                with.seek_s(off.abs_diff(head)) + 30.0 / 7200.0 + 4096.0 / 100e6
            ));
        }
        assert!(close(with.clock_s(), without.clock_s()));
    }

    #[test]
    fn writes_are_not_buffered_and_reset_the_stream() {
        let mut m = DiskModel::new(hdd(), GB).unwrap();
        m.request(Access::Read, 0, 4096);
        let c2 = m.request(Access::Write, 1_000_000, 4096);
        assert!(!c2.buffered);
        let c3 = m.request(Access::Read, 8192, 4096);
        assert!(
            !c3.buffered,
            "the write moved the head and dropped the stream"
        );
    }

    #[test]
    fn near_reads_cost_less_than_far_reads() {
        let near = (0..100).map(|i| (Access::Read, i * 1_048_576 * 3, 4096));
        let far = (0..100).map(|i| (Access::Read, if i % 2 == 0 { 0 } else { GB - 4096 }, 4096));
        let p = hdd();
        let tn = DiskModel::replay(p, GB, near).unwrap();
        let tf = DiskModel::replay(p, GB, far).unwrap();
        assert!(tn * 2.0 < tf, "{tn} vs {tf}");
    }

    #[test]
    fn parameters_are_checked() {
        let p = hdd();
        assert!(matches!(
            DiskParams {
                seek_full_ms: 20.0,
                ..p
            }
            .validate(),
            Err(ModelError::FullStrokeTooLong { .. })
        ));
        assert!(matches!(
            DiskParams {
                seek_full_ms: 5.0,
                ..p
            }
            .validate(),
            Err(ModelError::FullStrokeTooShort { .. })
        ));
        assert!(matches!(
            DiskParams { rpm: 0.0, ..p }.validate(),
            Err(ModelError::NotPositive { field: "rpm", .. })
        ));
        assert!(matches!(
            DiskParams {
                cache_mb: -1.0,
                ..p
            }
            .validate(),
            Err(ModelError::NegativeCache(_))
        ));
        assert!(DiskModel::new(p, 0).is_err());
        for m in NamedMedium::ALL {
            if let Some(p) = m.params() {
                p.validate().unwrap();
                assert!(p.settle_ms() > 0.0, "{}", m.name());
            }
            assert_eq!(NamedMedium::parse(m.name()), Some(m));
        }
    }

    #[test]
    fn medium_deserializes_from_a_name_or_parameters() {
        let m: Medium = serde_yaml::from_str("hdd-2008").unwrap();
        assert_eq!(m, Medium::Named(NamedMedium::Hdd2008));
        let m: Medium =
            serde_yaml::from_str("{ seek_avg_ms: 9, seek_full_ms: 16, rpm: 7200, mb_per_s: 80 }")
                .unwrap();
        assert_eq!(m.params().unwrap().cache_mb, 0.0);
        assert_eq!(m.label(), "custom");
        let e = serde_yaml::from_str::<Medium>("floppy")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown medium `floppy`") && e.contains("hdd-2008"),
            "{e}"
        );
        assert_eq!(Medium::Named(NamedMedium::None).params(), None);
    }
}
