//! The learner input log: everything that decides a learner's next state (each batch it
//! learns on, its publications, the reports and rounds its run counts, its checkpoints), in
//! the order it happened, so a distributed or GA3C run is replayed bit for bit in one process
//! (`rlgraph replay`). [`record`] is a record's bytes, [`mod@segments`] the folder of checksummed
//! segments, [`replay`] the replay.

pub mod record;
pub mod replay;
mod replayed_learner;
pub mod segments;

#[cfg(feature = "distributed")]
pub(crate) use record::rounds_record;
pub use record::{weights_crc, LogHeader, LogRecord, LOG_FORMAT};
pub use replay::{replay_log, ReplayOptions, ReplayOutcome};
pub use segments::{first_header, read_log, segments, LogWriter, Logged, Recording, DEFAULT_SEGMENT_BYTES};
