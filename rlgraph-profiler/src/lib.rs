//! A cross-stack profiler for RL workloads, in the spirit of RL-Scope (MLSys 2021).
//!
//! Code marks the algorithm's **phases** (`data_collection`, `training`) and nested
//! **operations** (`inference`, `backpropagation`, `simulation`) with RAII scopes. The
//! library **captures** the rest by itself: every plan step as backend time, uploads and
//! downloads as transfers, environment steps as simulator time. [`Breakdown`] then splits
//! each operation's time into exclusive categories, counting overlaps once, and
//! [`Calibration`] takes the profiler's own cost back out.
//!
//! ```
//! use rlgraph_profiler::{Breakdown, Category, Clock, Level, Profiler};
//!
//! let p = Profiler::new(Clock::virtual_with_cost(0), Level::Full);
//! {
//!     let _phase = p.phase("training");
//!     let _op = p.operation("backpropagation");
//!     p.clock().advance(30); // framework
//!     let step = p.capture(Category::Backend, "policy/dense");
//!     p.clock().advance(70);
//!     drop(step);
//! }
//! let b = Breakdown::from_events(&p.take_events());
//! let row = &b.rows[0];
//! assert_eq!((row.phase.as_str(), row.operation.as_str()), ("training", "backpropagation"));
//! assert_eq!(row.nanos[&Category::Framework], 30.0);
//! assert_eq!(row.nanos[&Category::Backend], 70.0);
//! ```
//!
//! When profiling is off (the default), a scope costs one relaxed atomic load
//! (`cargo bench -p rlgraph-profiler` measures it against no scope at all).

pub mod breakdown;
pub mod calibration;
pub mod chart;
pub mod clock;
pub mod event;
pub mod recorder;
pub mod trace;

pub use breakdown::{Breakdown, Row};
pub use calibration::{Calibration, CalibrationRun};
pub use clock::Clock;
pub use event::{Category, Event, Kind, Name};
pub use recorder::{capture, capture_step, enabled, global, operation, phase, set_level, Level, Profiler, Scope};
pub use trace::{chrome_trace, read_json, ProfileError};
