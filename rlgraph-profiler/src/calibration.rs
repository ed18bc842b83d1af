//! What the profiler's own bookkeeping costs, measured by running one workload three
//! times (profiling off, annotations only, full capture), so reports can subtract it.

use serde::{Deserialize, Serialize};

use crate::clock::Clock;
use crate::event::{Category, Kind, Name};
use crate::recorder::{Level, Profiler};

/// One run of the calibration workload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRun {
    /// Its wall-clock time in nanoseconds.
    pub wall_ns: f64,
    /// Annotation events it recorded.
    pub annotation_events: u64,
    /// Capture events it recorded.
    pub capture_events: u64,
}

/// The cost of one event of each kind, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// One phase or operation scope.
    pub annotation_ns: f64,
    /// One captured scope.
    pub capture_ns: f64,
    /// The runs it was derived from: off, annotations, full.
    #[serde(default)]
    pub runs: [CalibrationRun; 3],
}

impl Calibration {
    /// Derives the per-event costs: annotations explain the gap between the annotated run
    /// and the unprofiled one, captures the rest of the full run's gap. A negative estimate
    /// (noise larger than the cost) is taken as 0.
    pub fn derive(off: CalibrationRun, annotations: CalibrationRun, full: CalibrationRun) -> Calibration {
        let per = |gap: f64, n: u64| if n == 0 { 0.0 } else { (gap / n as f64).max(0.0) };
        let annotation_ns = per(annotations.wall_ns - off.wall_ns, annotations.annotation_events);
        let capture_ns = per(
            full.wall_ns - off.wall_ns - annotation_ns * full.annotation_events as f64,
            full.capture_events,
        );
        Calibration {
            annotation_ns,
            capture_ns,
            runs: [off, annotations, full],
        }
    }

    /// Measures the per-event costs directly: `n` scopes of each kind recorded back to back
    /// on a profiler of the machine's clock, the fastest of `repeats` tries. Steadier than
    /// [`Calibration::derive`] on a noisy machine, where the gap between two whole runs can
    /// be smaller than their jitter; it misses what events cost the workload's caches.
    pub fn measure(n: u64, repeats: usize) -> Calibration {
        let shared: std::sync::Arc<str> = std::sync::Arc::from("component/graph_fn");
        let time = |capture: bool| {
            (0..repeats.max(1))
                .map(|_| {
                    let p = Profiler::new(Clock::real(), Level::Full);
                    let start = std::time::Instant::now();
                    for _ in 0..n {
                        let _s = if capture {
                            p.open(
                                Kind::Capture(Category::Backend),
                                Name::Shared(shared.clone()),
                                None,
                                None,
                            )
                        } else {
                            p.operation("operation")
                        };
                    }
                    let elapsed = start.elapsed().as_nanos() as f64;
                    drop(p.take_events());
                    elapsed / n.max(1) as f64
                })
                .fold(f64::INFINITY, f64::min)
        };
        Calibration {
            annotation_ns: time(false),
            capture_ns: time(true),
            runs: Default::default(),
        }
    }

    /// What `annotation_events` and `capture_events` cost, in nanoseconds.
    pub fn overhead(&self, annotation_events: u64, capture_events: u64) -> f64 {
        self.annotation_ns * annotation_events as f64 + self.capture_ns * capture_events as f64
    }
}
