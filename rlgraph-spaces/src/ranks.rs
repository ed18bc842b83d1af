//! Batch and time ranks: the extra leading dimensions a space may carry.

/// Which extra leading ranks a primitive space has, and in which order.
///
/// With both ranks, batch-major data is `[batch, time, ...shape]` and time-major data is
/// `[time, batch, ...shape]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ranks {
    /// Whether a batch rank leads the shape.
    pub batch: bool,
    /// Whether a time rank leads the shape.
    pub time: bool,
    /// Whether the time rank comes before the batch rank.
    pub time_major: bool,
}

/// One extra leading dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExtraRank {
    Batch,
    Time,
}

impl Ranks {
    /// No extra ranks.
    pub const NONE: Ranks = Ranks {
        batch: false,
        time: false,
        time_major: false,
    };

    /// The extra ranks in data order.
    pub(crate) fn order(&self) -> Vec<ExtraRank> {
        match (self.batch, self.time, self.time_major) {
            (true, true, true) => vec![ExtraRank::Time, ExtraRank::Batch],
            (true, true, false) => vec![ExtraRank::Batch, ExtraRank::Time],
            (true, false, _) => vec![ExtraRank::Batch],
            (false, true, _) => vec![ExtraRank::Time],
            (false, false, _) => vec![],
        }
    }

    /// How many extra leading dimensions these ranks add.
    pub fn count(&self) -> usize {
        usize::from(self.batch) + usize::from(self.time)
    }

    /// The extra leading dimensions with the given sizes (`None` stays unknown).
    pub fn dims(&self, batch: Option<usize>, time: Option<usize>) -> Vec<Option<usize>> {
        self.order()
            .into_iter()
            .map(|r| match r {
                ExtraRank::Batch => batch,
                ExtraRank::Time => time,
            })
            .collect()
    }
}
