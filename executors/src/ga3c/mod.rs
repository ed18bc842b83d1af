//! GA3C (Babaeizadeh et al., ICLR 2017): agents that never run a forward pass of their own.
//!
//! ```text
//!  agent threads (NA)          predictor threads (NP)             trainer threads (NT)
//!  env.step ─► state ──► prediction queue ──► batched act ──┐
//!      ▲                                                     │ action, log-likelihood, version
//!      └─────────────────────────────────────────────────────┘
//!  every t_max steps or episode end: segment ──► training queue ──► batch ──► learner.learn
//!                                                                               │ publish
//!  predictors load the newest snapshot before each batch ◄──────────────────────┘
//! ```
//!
//! The learner and actor are the algorithm's own (its `agents::SegmentAlgorithm`, which PPO,
//! actor-critic and IMPALA have), so a config that trains with `rlgraph train` runs here by
//! adding `"executor": "ga3c"` to its `execution_spec`. Every trained frame's policy lag
//! (learner version minus acting version) is counted; IMPALA's V-trace corrects for it,
//! actor-critic and PPO learn as if on-policy, as GA3C did. [`ThreadAdjuster`] tunes NA, NP
//! and NT while it runs.

mod adjuster;
mod executor;
mod metrics;
mod roles;
mod run_record;
mod segment_value;
mod spec;

pub use adjuster::{Adjustment, ThreadAdjuster, Verdict};
pub(crate) use executor::RUN_PART;
pub use executor::{ga3c_algorithm, Ga3cExecutor};
pub use metrics::{Ga3cStats, LagHistogram};
pub(crate) use roles::Ga3cLearner;
pub(crate) use run_record::RunRecord;
pub(crate) use segment_value::segments_from_value;
pub use spec::{Ga3cSpec, ThreadCounts};
