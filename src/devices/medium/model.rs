//! The seek-distance disk model: what a request would cost on a rotating disk.
//!
//! Pure arithmetic, no I/O and no clock: the caller passes each request's arrival time
//! (seconds since the model started) and gets back the time its service completes. The
//! FUSE server ([`super::serve`]) sleeps until then; tests replay offsets through it.
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
//! track buffer (`cache_mb > 0`) the drive keeps reading ahead after a read, at the media
//! rate, up to the buffer's size; a later read inside that stream waits only for the data
//! to arrive (never faster than the media rate), and a short forward skip reads through
//! when that is cheaper than seeking. Writes are charged like reads and are never cached
//! (write-through: no write-back cache is modelled).

pub use crate::spec::media::{DiskParams, Medium, ModelError, NamedMedium, MEAN_SQRT_DISTANCE};

/// Read or write: the model charges both alike; only reads are served from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The read-ahead stream: since `t0` the drive has been reading from `origin` on, at the
/// media rate, until `limit` (the buffer is full).
#[derive(Debug, Clone, Copy)]
struct Stream {
    t0: f64,
    origin: u64,
    /// Where the buffered data starts (the last read's start).
    low: u64,
    limit: u64,
}

/// What one request cost, for tests and traces.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Charge {
    pub wait_s: f64,
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
    /// Where the head is (the byte after the last request), and when it is free.
    head: u64,
    busy_until: f64,
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
            busy_until: 0.0,
            stream: None,
        })
    }

    pub fn params(&self) -> &DiskParams {
        &self.params
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
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

    /// Serve a request arriving at `arrival` (seconds on the model's clock). Returns the
    /// time its service completes and what it cost. Requests are served one at a time, in
    /// arrival order (one head, no reordering).
    pub fn request(
        &mut self,
        access: Access,
        offset: u64,
        len: u64,
        arrival: f64,
    ) -> (f64, Charge) {
        let start = arrival.max(self.busy_until);
        let end = offset.saturating_add(len);
        let mut charge = Charge {
            wait_s: start - arrival,
            ..Charge::default()
        };
        let mut done = None;
        if access == Access::Read {
            if let Some(s) = self.stream {
                // The stream has been reading since t0 at the media rate up to `limit`.
                let read_so_far =
                    s.origin + ((start - s.t0).max(0.0) * self.params.bytes_per_s()) as u64;
                let reached = read_so_far.min(s.limit);
                if offset >= s.low && end <= s.limit {
                    // Inside the buffer's reach: wait for the data (through `end`) to arrive.
                    let ready = s.t0 + self.transfer_s(end.saturating_sub(s.origin));
                    let through = (ready - start).max(0.0);
                    let (seek, rot) = self.position_s(offset);
                    let direct = seek + rot + self.transfer_s(len);
                    if offset <= reached || through <= direct {
                        charge.transfer_s = through;
                        charge.buffered = true;
                        done = Some(start + through);
                    }
                }
            }
        }
        let finish = match done {
            Some(t) => t,
            None => {
                let (seek, rot) = self.position_s(offset);
                charge.seek_s = seek;
                charge.rotation_s = rot;
                charge.transfer_s = self.transfer_s(len);
                start + charge.service_s()
            }
        };
        self.head = end;
        self.busy_until = finish;
        self.stream = match access {
            Access::Read if self.params.cache_bytes() > 0 => {
                let keep = self.stream.filter(|_| charge.buffered);
                match keep {
                    // Still streaming: the buffer slides as the host consumes it.
                    Some(s) => {
                        let limit = end
                            .saturating_add(self.params.cache_bytes())
                            .min(self.capacity);
                        // If the buffer was full, the drive stopped at the old limit and
                        // resumes only now.
                        let stalled_at = s.t0 + self.transfer_s(s.limit.saturating_sub(s.origin));
                        if stalled_at < finish && s.limit < limit {
                            Some(Stream {
                                t0: finish,
                                origin: s.limit.max(end),
                                low: offset,
                                limit,
                            })
                        } else {
                            Some(Stream {
                                low: offset,
                                limit,
                                ..s
                            })
                        }
                    }
                    None => Some(Stream {
                        t0: finish,
                        origin: end,
                        low: offset,
                        limit: end
                            .saturating_add(self.params.cache_bytes())
                            .min(self.capacity),
                    }),
                }
            }
            _ => None,
        };
        (finish, charge)
    }

    /// The time the model takes for `requests` issued back to back (each arriving when
    /// the previous completes), from a head at 0: the expectation a test compares with.
    pub fn replay(
        params: DiskParams,
        capacity: u64,
        requests: impl IntoIterator<Item = (Access, u64, u64)>,
    ) -> Result<f64, ModelError> {
        let mut m = DiskModel::new(params, capacity)?;
        let mut t = 0.0;
        for (a, off, len) in requests {
            t = m.request(a, off, len, t).0;
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (t, c) = m.request(Access::Read, GB / 2, 4096, 0.0);
        let expect = m.seek_s(GB / 2) + 30.0 / 7200.0 + 4096.0 / 100e6;
        assert!(close(t, expect), "{t} {expect}");
        assert!(close(c.service_s(), expect));
        assert!(!c.buffered);
        // Continuing where it ended: transfer only.
        let (t2, c2) = m.request(Access::Read, GB / 2 + 4096, 4096, t);
        assert!(close(t2 - t, 4096.0 / 100e6));
        assert_eq!(c2.seek_s, 0.0);
        assert_eq!(c2.rotation_s, 0.0);
    }

    #[test]
    fn requests_queue_behind_a_busy_disk() {
        let mut m = DiskModel::new(no_cache(hdd()), GB).unwrap();
        let (t1, _) = m.request(Access::Write, GB, 4096, 0.0);
        // Arrives while the first is still being served: starts when it finishes.
        let (t2, c2) = m.request(Access::Write, 0, 4096, t1 / 2.0);
        assert!(close(c2.wait_s, t1 / 2.0));
        assert!(close(
            t2,
            t1 + m.seek_s(GB) + 30.0 / 7200.0 + 4096.0 / 100e6
        ));
        // Arrives after an idle gap: starts at arrival.
        let (t3, c3) = m.request(Access::Write, 4096, 4096, t2 + 1.0);
        assert_eq!(c3.wait_s, 0.0);
        assert!(close(t3, t2 + 1.0 + 4096.0 / 100e6));
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
    fn the_buffer_hides_host_gaps_but_never_beats_the_media_rate() {
        let mut m = DiskModel::new(hdd(), GB).unwrap();
        let (t, _) = m.request(Access::Read, 0, 65536, 0.0);
        // The host comes back 0.1 ms later for the next 64 KiB: the drive has been reading
        // ahead since t, so the data is ready at t + 64 KiB / rate.
        let (t2, c2) = m.request(Access::Read, 65536, 65536, t + 1e-4);
        assert!(c2.buffered);
        assert!(close(t2, t + 65536.0 / 100e6));
        // A long pause: the buffer filled up to 32 MB; a read inside it costs nothing.
        let (t3, c3) = m.request(Access::Read, 10_000_000, 4096, t2 + 5.0);
        assert!(c3.buffered);
        assert!(close(t3, t2 + 5.0), "{t3}");
        // Beyond the buffer's reach: a real seek.
        let (_, c4) = m.request(Access::Read, 500_000_000, 4096, t3);
        assert!(!c4.buffered);
        assert!(c4.seek_s > 0.0);
    }

    #[test]
    fn a_short_forward_skip_reads_through_when_cheaper_than_a_seek() {
        let mut m = DiskModel::new(hdd(), GB).unwrap();
        let (t, _) = m.request(Access::Read, 0, 4096, 0.0);
        // 40 KB further on: reading through takes 0.4 ms, a seek + half turn ~5 ms.
        let (t2, c2) = m.request(Access::Read, 4096 + 40_000, 4096, t);
        assert!(c2.buffered);
        assert!(close(t2 - t, 44_096.0 / 100e6));
        // 20 MB further on (inside the 32 MB window): a seek is cheaper than 200 ms of reading.
        let (_, c3) = m.request(Access::Read, 20_000_000, 4096, t2);
        assert!(!c3.buffered);
    }

    #[test]
    fn writes_are_not_buffered_and_reset_the_stream() {
        let mut m = DiskModel::new(hdd(), GB).unwrap();
        let (t, _) = m.request(Access::Read, 0, 4096, 0.0);
        let (t2, c2) = m.request(Access::Write, 1_000_000, 4096, t + 1.0);
        assert!(!c2.buffered);
        let (_, c3) = m.request(Access::Read, 8192, 4096, t2 + 1.0);
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
