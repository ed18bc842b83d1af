//! The profiler's time source: the machine's monotonic clock, or a virtual one that tests
//! advance by hand, so that attribution can be checked exactly.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Where timestamps come from.
#[derive(Debug)]
pub enum Clock {
    /// Nanoseconds since this instant.
    Real(Instant),
    /// Nanoseconds set by [`Clock::advance`]; with `per_event` > 0, recording an event
    /// also costs that much virtual time, as bookkeeping costs real time.
    Virtual {
        /// The current time.
        now: AtomicU64,
        /// What one recorded event costs.
        per_event: u64,
    },
}

impl Clock {
    /// The machine's clock, starting now.
    pub fn real() -> Clock {
        Clock::Real(Instant::now())
    }

    /// A virtual clock at 0 whose events cost `per_event` nanoseconds each.
    pub fn virtual_with_cost(per_event: u64) -> Clock {
        Clock::Virtual {
            now: AtomicU64::new(0),
            per_event,
        }
    }

    /// The current time in nanoseconds.
    pub fn now(&self) -> u64 {
        match self {
            Clock::Real(start) => u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX),
            Clock::Virtual { now, .. } => now.load(Ordering::Relaxed),
        }
    }

    /// Moves a virtual clock forward (a real one ignores this): the stand-in for work of a
    /// known length.
    pub fn advance(&self, nanos: u64) {
        if let Clock::Virtual { now, .. } = self {
            now.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// Charges one event's bookkeeping to a virtual clock.
    pub(crate) fn charge_event(&self) {
        if let Clock::Virtual { now, per_event } = self {
            now.fetch_add(*per_event, Ordering::Relaxed);
        }
    }
}
